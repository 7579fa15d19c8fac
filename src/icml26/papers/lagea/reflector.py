"""The scripted reflector: the stand-in for LaGEA's VLM that writes episodic reflections.

After EVERY episode the reflector emits one record (official: experiments/train_lagea.py calls
qwen_feedback after each episode and tells it the outcome; feedback/qwen_feedback.py) in a
fixed schema (INFERRED, spec)
    {outcome: "fail" | "success", error_type: MISSED_OBJECT | FAILED_PLACEMENT (failures) or
     NONE (successes), keyframe: int, summary: str}
- true error type: MISSED_OBJECT if the object was never held, else FAILED_PLACEMENT; the
  reported type is the true one with probability ``accuracy`` (0.8), else the other one
  (this stands for VLM error);
- true keyframe: MISSED_OBJECT -> the state step t in 0..n with the smallest agent-object
  Manhattan distance; FAILED_PLACEMENT -> the step with the smallest held-object-goal distance
  (first one on ties); the reported keyframe is the true one plus an integer jitter uniform in
  [-2, 2], clipped to the episode 0..n;
- 2-object variant (INFERRED): the diagnosis is about the object the episode failed on (the
  current object at its end): only the steps of the final phase count, for the error type
  (was that object ever held?) and for the keyframe (distances to that object);
- successful episodes get a success record (outcome known, as in the official prompt); its
  keyframe is the step at which the object was grasped (INFERRED; the official reward never
  reads the VLM's key frames, only LAGEA-REFLKEY does), with the same jitter;
- every record goes through ``validate``. A rejected record falls back, as the official parser
  does (feedback/qwen_utils.py: the task instruction becomes the summary), to the GOAL
  read-out for the feedback term and has no keyframe (shaping.py); only the spec-reading
  variant LAGEA-SPEC drops all shaping of that episode, as the spec says. The scripted reflector
  never emits such a record, but the path exists (and is tested) because a real VLM would.
"""

from __future__ import annotations

import numpy as np

ERROR_TYPES = ("MISSED_OBJECT", "FAILED_PLACEMENT")
NO_ERROR = "NONE"  # error_type of a success record
SCHEMA = {"outcome": str, "error_type": str, "keyframe": int, "summary": str}


def true_diagnosis(d_ao, d_og, hold, length, phase=None, success=None):
    """Per episode of a batch: (true error type id, true keyframe).

    d_ao, d_og, hold: (B, T+1) per state step, for the current object; length: (B,)
    transitions n, so states 0..n; phase: (B, T+1) index of the current object (2-object
    variant; None: one object), only the steps in the episode's final phase count;
    success: (B,) or None; a successful episode's keyframe is its first holding step.
    """
    T1 = d_ao.shape[1]
    steps = np.arange(T1)
    inside = steps[None, :] <= length[:, None]
    if phase is not None:
        final = phase[np.arange(len(length)), length]
        inside = inside & (phase == final[:, None])
    ever_held = np.any(hold.astype(bool) & inside, axis=1)
    err = ever_held.astype(np.int64)  # 0 MISSED_OBJECT, 1 FAILED_PLACEMENT
    big = 10**6
    key_missed = np.argmin(np.where(inside, d_ao, big), axis=1)
    key_placed = np.argmin(np.where(inside & hold.astype(bool), d_og, big), axis=1)
    key = np.where(ever_held, key_placed, key_missed)
    if success is not None:
        key_grasp = np.argmax(inside & hold.astype(bool), axis=1)
        key = np.where(success, key_grasp, key)
    return err, key


def reflect(err_true, key_true, length, flip_u, jitter, accuracy, success=None):
    """Records of the scripted reflector for a batch of episodes (one dict each).

    flip_u: (B,) uniforms (report the wrong type when >= accuracy); jitter: (B,) ints in
    [-2, 2]; accuracy: scalar or (B,); success: (B,) outcomes (None: all failed).
    """
    records = []
    accuracy = np.broadcast_to(np.asarray(accuracy, float), np.shape(err_true))
    success = np.zeros(np.shape(err_true), bool) if success is None else success
    for e, k, n, u, j, acc, ok in zip(err_true, key_true, length, flip_u, jitter, accuracy,
                                      success, strict=True):
        key = int(min(max(int(k) + int(j), 0), int(n)))
        if ok:
            records.append({"outcome": "success", "error_type": NO_ERROR, "keyframe": key,
                            "summary": f"Success: the agent grasped the object at step {key} "
                                       "and carried it to the goal."})
            continue
        reported = int(e) if u < acc else 1 - int(e)
        what = ("never grasped the object" if reported == 0
                else "held the object but did not place it on the goal")
        records.append({
            "outcome": "fail",
            "error_type": ERROR_TYPES[reported],
            "keyframe": key,
            "summary": f"Failure: the agent {what}; decisive moment at step {key}.",
        })
    return records


def validate(record, length: int) -> bool:
    """True iff the record fits the schema (keys, types, enums, keyframe inside the episode)."""
    if not isinstance(record, dict) or set(record) != set(SCHEMA):
        return False
    for key, kind in SCHEMA.items():
        value = record[key]
        if kind is int and (isinstance(value, bool) or not isinstance(value, (int, np.integer))):
            return False
        if kind is str and not isinstance(value, str):
            return False
    typed = ((record["outcome"] == "fail" and record["error_type"] in ERROR_TYPES)
             or (record["outcome"] == "success" and record["error_type"] == NO_ERROR))
    return typed and 0 <= record["keyframe"] <= length and len(record["summary"]) > 0


def parse(records, lengths):
    """Records -> arrays (error type id, keyframe, valid); a success record has error type
    -1; rejected records are invalid (error type -1, keyframe 0)."""
    n = len(records)
    err, key, valid = np.full(n, -1, np.int64), np.zeros(n, np.int64), np.zeros(n, bool)
    for i, (rec, length) in enumerate(zip(records, lengths, strict=True)):
        if validate(rec, int(length)):
            if rec["outcome"] == "fail":
                err[i] = ERROR_TYPES.index(rec["error_type"])
            key[i] = rec["keyframe"]
            valid[i] = True
    return err, key, valid
