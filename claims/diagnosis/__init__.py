"""Stuck-ResourceClaim diagnosis: pure rules over a frozen ClusterState.

``ClusterState.from_objects(objects, prom)`` -> ``diagnose(state, now, thresholds)`` ->
``list[Finding]``. No Django import anywhere in this package.
"""

from claims.diagnosis.engine import AnalysisFailure, Diagnosis, diagnose, run_diagnosis
from claims.diagnosis.findings import CATEGORIES, Finding, ObjectRef
from claims.diagnosis.state import ClusterState
from claims.diagnosis.thresholds import Thresholds

__all__ = ["CATEGORIES", "AnalysisFailure", "ClusterState", "Diagnosis", "Finding", "ObjectRef", "Thresholds", "diagnose",
           "run_diagnosis"]
