"""Saving a whole module and loading it back with weights_only: refused, unless its classes are
allowed with safe_globals or add_safe_globals, as in torch."""

import io
import pickle

import pytest
import torch

import mini_autograd as ma


def _saved_model(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU())
    buffer = io.BytesIO()
    lib.save(model, buffer)
    buffer.seek(0)
    return model, buffer


@pytest.mark.parametrize("lib", [torch, ma], ids=["torch", "mini_autograd"])
def test_a_whole_module_loads_only_with_its_classes_allowed(lib):
    model, buffer = _saved_model(lib)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        lib.load(buffer)
    buffer.seek(0)
    with lib.serialization.safe_globals([lib.nn.Sequential, lib.nn.Linear, lib.nn.ReLU]):
        loaded = lib.load(buffer)
    assert repr(loaded) == repr(model)
    assert loaded[0].weight.tolist() == model[0].weight.tolist()
    assert loaded[0].weight.requires_grad
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        lib.load(buffer)  # allowed inside the block only


def test_add_safe_globals_and_map_location():
    model, buffer = _saved_model(ma)
    allowed = [ma.nn.Sequential, ma.nn.Linear, ma.nn.ReLU]
    ma.serialization.add_safe_globals(allowed)
    try:
        assert repr(ma.load(buffer, map_location="cpu")) == repr(model)
    finally:
        ma.serialization.clear_safe_globals()
    buffer.seek(0)
    with pytest.raises(RuntimeError, match="CPU only"):
        ma.load(buffer, map_location="cuda:0")
    buffer.seek(0)
    assert repr(ma.load(buffer, weights_only=False)) == repr(model)
