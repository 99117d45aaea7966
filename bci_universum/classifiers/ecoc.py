"""Multiclass universum learning with error-correcting output codes (ECOC), Sinz §2.2.1.3.

A coding matrix ``M ∈ {−1, 0, +1}^(n_classes × n_columns)`` defines one binary problem per
column: classes coded +1 against classes coded −1. The classes coded 0 in a column are that
column's universum (with ``zero_as_universum=True``), on top of any recorded universum trials.
A test trial gets the column scores ``h = (h_1(x), …, h_n(x))`` and the class whose code word is
nearest under the decoder (notes ``universum-svm.md`` §6):

* ``"hamming"`` (2.21): ``Σ_j (1 − sign(h_j) M_ij) / 2`` (a 0 on either side costs ½);
* ``"l1"`` (2.23): ``Σ_j |M_ij − h_j|``;
* ``"hinge"`` (2.22): ``Σ_j ℓ_j(M_ij, h_j)`` with the hinge ``max(0, 1 − M_ij h_j)`` for ±1 and,
  for 0, the column's universum loss ``max(0, |h_j| − ε_j)`` (ε_j: the column estimator's
  ``epsilon``, 0 if it has none) when the column was trained to output about 0 on its
  zero-coded classes (they were its universum and its universum cost is positive); otherwise
  the constant 1 of ``"allwein"``, since nothing trained the column there;
* ``"allwein"``: loss-based decoding of Allwein, Schapire & Singer (2000), the hinge for every
  entry, so a 0 costs the constant ``max(0, 1 − 0) = 1``.

Without a universum the ``"hinge"`` default is therefore ``"allwein"``. ``"l1"`` charges a 0
``|h_j|`` whatever the training: it needs a universum on codes with zeros (one-vs-one, FINGERS).

The default ``decoder="auto"`` picks, at fit, the decoder that suits the code and the training
(:attr:`ECOCUniversumClassifier.decoder_`): ``"hinge"`` when every column with zeros learnt its
zero-coded classes as universum (or the code has no zeros, e.g. one-vs-rest, where it equals
``"allwein"``), else ``"hamming"``, which for one-vs-one codes is the vote count of
scikit-learn's :class:`~sklearn.multiclass.OneVsOneClassifier`. Exact Hamming ties (equal
votes) go to the larger summed confidence ``Σ_j M_ij h_j``, as in scikit-learn's one-vs-one
(for one-vs-rest this is the largest ``h_i``); any other exact tie goes to the first class in
``classes_`` order.

``decision_function`` returns one score per class, minus the decoded distance (for
``"hamming"`` plus the tie-breaking confidence squeezed into (−1/6, 1/6), below the ½ steps of
the Hamming distance), so that its argmax is ``predict``, as scikit-learn's scorers assume; for
one-vs-one Hamming decoding it is scikit-learn's ``OneVsOneClassifier.decision_function`` up to
a constant and the scale of the confidence term. ``column_scores`` gives the column outputs
``h_j(x)``.
"""

from __future__ import annotations

import itertools
import numbers
import warnings
from numbers import Integral
from typing import ClassVar

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, MetaEstimatorMixin, _fit_context, clone
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._constraints import UNIVERSUM_LABEL
from .._universum import UNIVERSUM, universum_mask
from ._base import UniversumClassifierMixin
from .usvm import UniversumSVC

DECODERS = ("hamming", "l1", "hinge", "allwein")

#: The thesis's 5-class FINGERS coding matrix (3.1). Rows: no finger, left little finger, left
#: thumb, right thumb, right little finger (label them 0–4 in this order, see
#: :data:`FINGERS_CLASSES`; rows follow the sorted labels, so with the names as labels use
#: ``FINGERS_CODING[np.argsort(FINGERS_CLASSES)]``). Columns: (i) finger vs none, (ii) left vs
#: right hand, (iii) left hand: little finger vs thumb, (iv) right hand: thumb vs little finger.
FINGERS_CODING = np.array(
    [
        [+1, 0, 0, 0],
        [-1, +1, +1, 0],
        [-1, +1, -1, 0],
        [-1, -1, 0, +1],
        [-1, -1, 0, -1],
    ],
    dtype=np.int64,
)
FINGERS_CLASSES = ("none", "left_little", "left_thumb", "right_thumb", "right_little")


def one_vs_one_coding(n_classes: int) -> np.ndarray:
    """One-vs-one coding matrix: column (a, b), a < b, codes class a +1 and class b −1.

    Columns are in lexicographic order of the pairs; the other classes are coded 0.
    """
    pairs = list(itertools.combinations(range(n_classes), 2))
    M = np.zeros((n_classes, len(pairs)), dtype=np.int64)
    for j, (a, b) in enumerate(pairs):
        M[a, j], M[b, j] = 1, -1
    return M


def one_vs_rest_coding(n_classes: int) -> np.ndarray:
    """One-vs-rest coding matrix ``2I − 11ᵀ`` (no zeros, hence no class universum)."""
    return 2 * np.eye(n_classes, dtype=np.int64) - 1


def check_coding_matrix(coding, n_classes: int) -> np.ndarray:
    """Validate a coding matrix for ``n_classes`` classes; return it as int64.

    Raises ``ValueError`` for a wrong shape, entries outside {−1, 0, +1}, a column without both
    a +1 and a −1, a class coded 0 in every column, or two classes with the same code word.
    Warns (``UserWarning``) for duplicate or complementary columns (the same binary problem).
    """
    M = np.asarray(coding)
    if M.ndim != 2 or M.shape[0] != n_classes or M.shape[1] < 1:
        raise ValueError(
            f"The coding matrix must have shape (n_classes={n_classes}, n_columns >= 1); "
            f"got shape {M.shape}."
        )
    if not np.all(np.isin(M, (-1, 0, 1))):
        raise ValueError("The coding matrix must contain only -1, 0 and +1.")
    M = M.astype(np.int64)
    for j in range(M.shape[1]):
        if not (np.any(M[:, j] == 1) and np.any(M[:, j] == -1)):
            raise ValueError(
                f"Column {j} of the coding matrix needs at least one class coded +1 and one "
                f"coded -1; got {M[:, j].tolist()}."
            )
    for i in np.flatnonzero(np.all(M == 0, axis=1)):
        raise ValueError(f"Class {i} is coded 0 in every column: no classifier can predict it.")
    rows = {}
    for i, row in enumerate(map(tuple, M)):
        if row in rows:
            raise ValueError(
                f"Classes {rows[row]} and {i} have the same code word {M[i].tolist()}; the "
                "decoder cannot tell them apart."
            )
        rows[row] = i
    for a, b in itertools.combinations(range(M.shape[1]), 2):
        if np.array_equal(M[:, a], M[:, b]) or np.array_equal(M[:, a], -M[:, b]):
            kind = "identical" if np.array_equal(M[:, a], M[:, b]) else "complementary"
            warnings.warn(
                f"Columns {a} and {b} of the coding matrix are {kind}: they train the same "
                "binary problem twice.",
                UserWarning,
                stacklevel=3,
            )
    return M


def ecoc_distances(
    scores, coding, decoder: str = "hinge", epsilon=0.0, universum_columns=None
) -> np.ndarray:
    """Distances between column scores and every class's code word.

    Parameters
    ----------
    scores : array-like of shape (n_samples, n_columns)
        Column outputs ``h_j(x)``.
    coding : array-like of shape (n_classes, n_columns)
        Coding matrix in {−1, 0, +1}.
    decoder : {"hamming", "l1", "hinge", "allwein"}
        See the module docstring.
    epsilon : float or array-like of shape (n_columns,)
        Universum tube half-width ε_j of each column (``"hinge"`` only).
    universum_columns : array-like of bool, shape (n_columns,), or None
        Columns trained with their zero-coded classes as universum (``"hinge"`` only): their
        zeros cost the universum loss, the other columns' zeros the constant 1. ``None``: all.

    Returns
    -------
    distances : ndarray of shape (n_samples, n_classes)
        The predicted class is the argmin (first class among exact ties).
    """
    if decoder not in DECODERS:
        raise ValueError(f"Unknown decoder {decoder!r}; expected one of {DECODERS}.")
    h = np.asarray(scores, dtype=np.float64)
    M = np.asarray(coding, dtype=np.float64)
    if h.ndim != 2 or h.shape[1] != M.shape[1]:
        raise ValueError(
            f"scores must have shape (n_samples, {M.shape[1]}) for this coding matrix; "
            f"got {h.shape}."
        )
    h3, M3 = h[:, None, :], M[None, :, :]
    if decoder == "hamming":
        terms = (1.0 - np.sign(h3) * M3) / 2.0
    elif decoder == "l1":
        terms = np.abs(M3 - h3)
    else:
        terms = np.maximum(0.0, 1.0 - M3 * h3)
        if decoder == "hinge":
            eps = np.broadcast_to(np.asarray(epsilon, dtype=np.float64), (M.shape[1],))
            universum_loss = np.maximum(0.0, np.abs(h3) - eps)
            trained = np.ones(M.shape[1], dtype=bool)
            if universum_columns is not None:
                trained = np.broadcast_to(np.asarray(universum_columns, dtype=bool), trained.shape)
            terms = np.where((M3 == 0) & trained, universum_loss, terms)
    return terms.sum(axis=2)


def _trains_on_universum(estimator) -> bool:
    """Whether a fitted column classifier gives its universum trials a positive cost."""
    cost = getattr(estimator, "C_universum_", getattr(estimator, "C_universum", 0.0))
    return isinstance(cost, numbers.Real) and cost > 0


def _fit_column(estimator, X, y_column, universum_label):
    """Fit one column's binary classifier; classes 0 (coded −1) and 1 (coded +1)."""
    if universum_label is not None:
        estimator.set_params(universum_label=universum_label)
    return estimator.fit(X, y_column)


class ECOCUniversumClassifier(UniversumClassifierMixin, MetaEstimatorMixin, BaseEstimator):
    """Multiclass classifier from binary universum classifiers under a coding matrix.

    Column j trains a clone of ``estimator`` on the classes coded +1 (positive) against those
    coded −1; the classes coded 0 join the column's universum (``zero_as_universum=True``),
    as do the recorded universum trials (sentinel label in ``y``). Prediction decodes the column
    scores with ``decoder``.

    Parameters
    ----------
    estimator : estimator or None, default=None
        A binary classifier with ``decision_function`` (positive = its ``classes_[1]``) and,
        to receive universum trials, a ``universum_label`` parameter (any universum classifier
        of the project). ``None`` means :class:`UniversumSVC()
        <bci_universum.classifiers.UniversumSVC>`. With ``kernel="precomputed"``, ``X`` is the
        kernel matrix over all trials; each column gets its rows and columns.
    coding : {"ovo", "ovr"} or array-like of shape (n_classes, n_columns), default="ovo"
        One-vs-one (pair (a, b), a < b: a is +1, b is −1), one-vs-rest, or a matrix in
        {−1, 0, +1} whose rows follow ``classes_`` (sorted labels), e.g.
        :data:`FINGERS_CODING`. With two classes "ovo" and "ovr" are the single column
        ``[+1, −1]``.
    decoder : {"auto", "hinge", "hamming", "l1", "allwein"}, default="auto"
        See the module docstring. ``"auto"``: ``"hinge"`` if every column with zeros was
        trained with its zero-coded classes as universum at a positive universum cost (or the
        code has no zeros), else ``"hamming"``. Combinations checked against scikit-learn's
        one-vs-one / one-vs-rest SVC with ``C_universum=0`` (≥ 99 % agreement): "ovo" with
        "hamming" (what "auto" picks), "ovr" with "hinge" or "allwein". "l1" on a code with
        zeros, and "hinge" as the thesis uses it (zeros charged ``|h| − ε``), need a universum.
    zero_as_universum : bool, default=True
        Use the trials of classes coded 0 as the column's universum; ``False`` leaves them
        out of that column.
    n_jobs : int or None, default=None
        Columns fitted in parallel by joblib.
    universum_label : int, str or None, default=None
        Label of universum trials in ``y`` (``None``: ``-2`` or ``"universum"``).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    code_book_ : ndarray of int of shape (n_classes, n_columns)
        The coding matrix used; row i codes ``classes_[i]``.
    estimators_ : list of estimators
        The fitted column classifiers (their class 1 is the +1 side).
    column_epsilon_ : ndarray of shape (n_columns,)
        ε_j used by the hinge decoder.
    decoder_ : str
        The decoder used (``decoder``, or what ``"auto"`` resolves to for this fit).
    column_universum_ : ndarray of bool, shape (n_columns,)
        Columns trained with their zero-coded classes as universum at a positive cost: the
        hinge decoder charges their zeros the universum loss, the other columns' zeros 1.
    n_features_in_ : int

    Notes
    -----
    ``decision_function`` returns per-class scores whose argmax is ``predict`` (see the module
    docstring); for two classes one score, positive for ``classes_[1]`` (with the default
    single column, its signed output). :meth:`column_scores` returns the column outputs
    ``h_j(x)``. There is no ``predict_proba``. Exact ties between decoded distances go to the
    first class in ``classes_`` order.
    """

    _parameter_constraints: ClassVar[dict] = {
        "estimator": [None, HasMethods(["fit", "decision_function"])],
        "coding": [StrOptions({"ovo", "ovr"}), "array-like"],
        "decoder": [StrOptions({"auto", *DECODERS})],
        "zero_as_universum": ["boolean"],
        "n_jobs": [Integral, None],
        "universum_label": UNIVERSUM_LABEL,
    }

    def __init__(
        self,
        estimator=None,
        coding="ovo",
        decoder="auto",
        zero_as_universum=True,
        n_jobs=None,
        universum_label=None,
    ):
        self.estimator = estimator
        self.coding = coding
        self.decoder = decoder
        self.zero_as_universum = zero_as_universum
        self.n_jobs = n_jobs
        self.universum_label = universum_label

    def _code_book(self, n_classes: int) -> np.ndarray:
        if isinstance(self.coding, str):
            if n_classes == 2:
                return np.array([[1], [-1]], dtype=np.int64)
            if self.coding == "ovo":
                return one_vs_one_coding(n_classes)
            return one_vs_rest_coding(n_classes)
        return check_coding_matrix(self.coding, n_classes)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit one binary universum classifier per column of the coding matrix.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Labelled and universum trials.
        y : array-like of shape (n_samples,)
            Class labels, the universum sentinel for universum trials.

        Returns
        -------
        self : ECOCUniversumClassifier
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        mask = universum_mask(y, self.universum_label)
        check_classification_targets(y[~mask])
        self.classes_, codes = np.unique(y[~mask], return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(
                f"The labelled trials contain {self.classes_.size} class(es) "
                f"{self.classes_.tolist()}; ECOCUniversumClassifier needs at least two."
            )
        M = self._code_book(self.classes_.size)
        self.code_book_ = M
        base = UniversumSVC() if self.estimator is None else self.estimator
        takes_universum = "universum_label" in base.get_params()
        if self._pairwise() and X.shape[0] != X.shape[1]:
            raise ValueError(
                f"A precomputed kernel must be square over the training trials, got {X.shape}."
            )
        self._column_trials = []
        lab_pos = np.flatnonzero(~mask)
        jobs, zero_in_universum = [], []
        for j in range(M.shape[1]):
            code = M[codes, j]
            y_col = np.full(y.shape[0], UNIVERSUM, dtype=np.int64)
            y_col[lab_pos] = np.where(code > 0, 1, np.where(code < 0, 0, UNIVERSUM))
            zero_coded = ~mask & (y_col == UNIVERSUM)
            keep = np.ones(y.shape[0], dtype=bool) if self.zero_as_universum else ~zero_coded
            zero_in_universum.append(self.zero_as_universum and zero_coded.any())
            has_universum = np.any(y_col[keep] == UNIVERSUM)
            if has_universum and not takes_universum:
                raise ValueError(self._no_universum_message(base, j, mask.any()))
            label = UNIVERSUM if takes_universum else None
            rows = np.flatnonzero(keep)
            self._column_trials.append(rows)
            X_col = X[np.ix_(rows, rows)] if self._pairwise() else X[rows]
            jobs.append((clone(base), X_col, y_col[rows], label))
        self.estimators_ = Parallel(n_jobs=self.n_jobs)(delayed(_fit_column)(*job) for job in jobs)
        self.column_epsilon_ = np.array(
            [float(getattr(est, "epsilon", 0.0)) for est in self.estimators_]
        )
        self.column_universum_ = np.array(zero_in_universum, dtype=bool) & np.array(
            [_trains_on_universum(est) for est in self.estimators_], dtype=bool
        )
        untrained = np.flatnonzero(np.any(M == 0, axis=0) & ~self.column_universum_)
        if self.decoder == "l1" and untrained.size:
            warnings.warn(
                f"decoder='l1' charges zero-coded classes |h_j|, but columns "
                f"{untrained.tolist()} were not trained with them as universum (no universum "
                "cost or zero_as_universum=False); use decoder='auto' or 'hamming'.",
                UserWarning,
                stacklevel=2,
            )
        return self

    def _no_universum_message(self, base, column: int, recorded: bool) -> str:
        """Why column ``column`` has universum trials ``base`` cannot take, and the remedies."""
        name = type(base).__name__
        given, remedies = [], []
        zero = self.classes_[self.code_book_[:, column] == 0]
        if self.zero_as_universum and zero.size:
            given.append(
                f"its zero-coded classes {zero.tolist()} as universum trials "
                "(zero_as_universum=True)"
            )
            remedies.append("zero_as_universum=False")
        if recorded:
            given.append("the universum trials of y")
            remedies.append("no universum trials in y")
        return (
            f"Column {column} passes {' and '.join(given)} to {name}, which has no "
            f"universum_label parameter to take them. Use {' and '.join(remedies)}, or wrap "
            f"the base in LabelledOnly({name}(...)) (bci_universum.pipelines) to drop them, or "
            "use a universum classifier."
        )

    def column_scores(self, X) -> np.ndarray:
        """Column outputs ``h_j(x)``, the scores the decoder reads (positive = the +1 side).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples, n_columns)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        if self._pairwise():
            # kernel between the test trials and each column's own training trials
            return np.column_stack(
                [
                    est.decision_function(X[:, rows])
                    for est, rows in zip(self.estimators_, self._column_trials, strict=True)
                ]
            )
        return np.column_stack([est.decision_function(X) for est in self.estimators_])

    def _pairwise(self) -> bool:
        base = UniversumSVC() if self.estimator is None else self.estimator
        return base.get_params().get("kernel") == "precomputed"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self._pairwise()
        return tags

    def decision_function(self, X) -> np.ndarray:
        """Per-class scores; their argmax is :meth:`predict`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes), or (n_samples,) for two classes
            See :meth:`decision_from_columns`.
        """
        return self.decision_from_columns(self.column_scores(X))

    def decision_from_columns(self, scores) -> np.ndarray:
        """:meth:`decision_function`'s output from column outputs ``h_j(x)``.

        Each class scores minus its decoded distance; with the ``"hamming"`` decoder plus
        ``c / (6 (|c| + 1))`` of its confidence ``c = Σ_j M_ij h_j``, which breaks equal votes
        as :meth:`predict` does without overturning a vote (Hamming distances differ by
        multiples of ½).

        Parameters
        ----------
        scores : array-like of shape (n_samples, n_columns)
            Column outputs, as :meth:`column_scores` returns them.

        Returns
        -------
        decision : ndarray of shape (n_samples, n_classes), or (n_samples,) for two classes
            For two classes one value, positive for ``classes_[1]``: the single column's
            output signed that way, or the difference of the two class scores.
        """
        check_is_fitted(self)
        return self._class_scores(np.asarray(scores, dtype=np.float64))

    def _class_scores(self, h: np.ndarray) -> np.ndarray:
        # decision_from_columns without the fitted check: decision_trial runs per update
        if self.code_book_.shape[1] == 1:
            return h[:, 0] * self.code_book_[1, 0]
        decision = -self._distances(h)
        if self.decoder_ == "hamming":
            confidence = h @ self.code_book_.T
            decision += confidence / (6.0 * (np.abs(confidence) + 1.0))
        if self.classes_.size == 2:
            return decision[:, 1] - decision[:, 0]
        return decision

    def decision_trial(self, x: np.ndarray):
        """Lean single-trial path for online use: :meth:`decision_function` of one trial.

        Each column classifier runs its own ``decision_trial`` when it has one (else its
        ``decision_function`` on a batch of one). No validation: ``x`` must be a finite float64
        vector of ``n_features_in_`` features (precomputed kernels: its kernel values against
        the trials of ``fit``).

        Parameters
        ----------
        x : ndarray of shape (n_features,)

        Returns
        -------
        scores : ndarray of shape (n_classes,), or float for two classes
        """
        scores = np.empty(len(self.estimators_))
        pairwise = self._pairwise()
        for j, (est, rows) in enumerate(zip(self.estimators_, self._column_trials, strict=True)):
            x_col = x[rows] if pairwise else x
            lean = getattr(est, "decision_trial", None)
            scores[j] = lean(x_col) if lean is not None else est.decision_function(x_col[None])[0]
        return self._class_scores(scores[np.newaxis])[0]

    def predict_from_decision(self, scores) -> np.ndarray:
        """The labels :meth:`predict` gives, from :meth:`decision_function`'s output.

        Parameters
        ----------
        scores : array-like of shape (n_samples, n_classes), or (n_samples,) for two classes

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The argmax (the first class among exact ties); for two classes ``classes_[1]``
            where the score is positive.
        """
        check_is_fitted(self)
        decision = np.asarray(scores, dtype=np.float64)
        if decision.ndim == 1:
            return self.classes_[(decision > 0).astype(int)]
        return self.classes_[np.argmax(decision, axis=1)]

    @property
    def decoder_(self) -> str:
        """The decoder used: ``decoder``, or what ``"auto"`` resolves to for this fit."""
        check_is_fitted(self)
        if self.decoder != "auto":
            return self.decoder
        has_zeros = np.any(self.code_book_ == 0, axis=0)
        return "hinge" if self.column_universum_[has_zeros].all() else "hamming"

    def _distances(self, h: np.ndarray) -> np.ndarray:
        return ecoc_distances(
            h, self.code_book_, self.decoder_, self.column_epsilon_, self.column_universum_
        )

    def decode(self, X) -> np.ndarray:
        """Decoder distances of every trial to every class's code word.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        distances : ndarray of shape (n_samples, n_classes)
        """
        return self._distances(self.column_scores(X))

    def predict(self, X) -> np.ndarray:
        """Class with the nearest code word (ties: see the module docstring).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return self.predict_from_decision(self.decision_function(X))
