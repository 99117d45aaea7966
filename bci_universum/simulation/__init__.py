"""Seeded simulators of neural data (EEG, spike trains) as pure functions, no LSL."""
