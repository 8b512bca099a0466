"""The CRDs of the metacontroller.k8s.io API (also at manifests/crds in the repository)."""

from __future__ import annotations

from pathlib import Path

CRD_DIR = Path(__file__).parent
CRD_FILES = (
    CRD_DIR / "compositecontrollers.yaml",
    CRD_DIR / "decoratorcontrollers.yaml",
    CRD_DIR / "mapcontrollers.yaml",
    CRD_DIR / "controllerrevisions.yaml",
)
