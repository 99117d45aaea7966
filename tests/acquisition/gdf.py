"""A minimal GDF 2.20 writer for tests (no Python library writes GDF).

Layout from the GDF 2 specification (Schlögl, 2006): a 256-byte fixed header, 256 bytes per
channel, records of float32 samples, then an event table (mode 1: position and type).
"""

import struct

import numpy as np

MICROVOLT = 4275  # GDF physical dimension code


def write_gdf(fname, data, ch_names, sfreq, events=()):
    """Write ``data`` (n_channels, n_times) in µV as float32 records of one second.

    ``events`` are ``(sample, type)`` pairs; readers annotate them with ``str(type)``.
    """
    data = np.asarray(data, dtype=np.float32)
    n_ch, n_times = data.shape
    per_record = int(sfreq)
    n_records = -(-n_times // per_record)
    padded = np.zeros((n_ch, n_records * per_record), np.float32)
    padded[:, :n_times] = data
    fixed = bytearray(256)
    fixed[0:8] = b"GDF 2.20"
    fixed[8:74] = b"X X".ljust(66)
    fixed[88:152] = b"test".ljust(64)
    struct.pack_into("<H", fixed, 184, n_ch + 1)  # header length in 256-byte blocks
    struct.pack_into("<q", fixed, 236, n_records)
    struct.pack_into("<II", fixed, 244, 1, 1)  # record duration 1/1 s
    struct.pack_into("<H", fixed, 252, n_ch)
    channels = b"".join(name.encode().ljust(16) for name in ch_names)
    channels += b" " * 80 * n_ch + b" " * 6 * n_ch  # transducer, obsolete dimension text
    limit = float(np.abs(padded).max()) + 1.0
    channels += struct.pack(f"<{n_ch}H", *[MICROVOLT] * n_ch)
    for value in (-limit, limit, -limit, limit):  # physical, then digital min / max
        channels += struct.pack(f"<{n_ch}d", *[value] * n_ch)
    channels += b"\0" * 68 * n_ch  # obsolete pre-filtering text
    channels += b"\0" * 12 * n_ch  # low-pass, high-pass, notch
    channels += struct.pack(f"<{n_ch}i", *[per_record] * n_ch)
    channels += struct.pack(f"<{n_ch}i", *[16] * n_ch)  # float32
    channels += b"\0" * (12 + 20) * n_ch  # positions, impedances
    records = padded.reshape(n_ch, n_records, per_record).transpose(1, 0, 2).tobytes()
    positions = [int(s) + 1 for s, _ in events]  # 1-based
    table = bytes([1]) + len(positions).to_bytes(3, "little") + struct.pack("<f", sfreq)
    table += struct.pack(f"<{len(positions)}I", *positions)
    table += struct.pack(f"<{len(positions)}H", *[int(t) for _, t in events])
    with open(fname, "wb") as handle:
        handle.write(bytes(fixed) + channels + records + table)
