"""Device and precision choice for torch-based models."""

from __future__ import annotations

import torch

from robustcount.errors import RobustcountError

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
"""Precisions by name; half precisions need a GPU."""


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """`auto` picks the first CUDA GPU when there is one, else the CPU; `cpu`, `cuda`, `cuda:1` as given."""
    if isinstance(device, torch.device):
        return device
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except RuntimeError as err:
        raise RobustcountError(f"unknown device {device!r} (use cpu, cuda, cuda:N or auto)") from err
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise RobustcountError(f"device {device!r} requested but no CUDA GPU is available")
    return resolved


def resolve_dtype(dtype: str, device: torch.device) -> torch.dtype:
    """The torch dtype for a precision name; float16 and bfloat16 only on a GPU."""
    if dtype not in DTYPES:
        raise RobustcountError(f"unknown precision {dtype!r} (use {', '.join(DTYPES)})")
    if dtype != "float32" and device.type != "cuda":
        raise RobustcountError(f"precision {dtype} needs a CUDA GPU; use float32 on {device.type}")
    return DTYPES[dtype]


def precision_of(model) -> str | None:
    """The precision (a name of DTYPES) a torch-based classifier runs at, from its `dtype`; None
    for a model without one (scikit-learn, a function), which no precision option changes."""
    dtype = getattr(model, "dtype", None)
    return next((name for name, value in DTYPES.items() if value == dtype), None)
