"""Mini-BEAR items as arrays for the tiny scorers (numpy): question tokens, options, the
ground-truth object list (oracle perception) and the tool-output object list (the agent)."""

from __future__ import annotations

import numpy as np

from icml26.agents.worlds import scenes as W

N_SLOTS = 4                 # objects per scene, zero-padded
# option-token vocabulary: 0 pad, 1..12 objects, 13..20 directions, 21..24 relations,
# 25/26 not free / free, 27..30 counts
TOK_OBJ, TOK_DIR, TOK_REL, TOK_FREE, TOK_CNT = 1, 13, 21, 25, 27
VOCAB = 31
SKILL_ID = {s: i for i, s in enumerate(W.SKILLS)}


def obj_token(o) -> int:
    return TOK_OBJ + 3 * int(o[0]) + int(o[1])


def slot_dim(frames: int, tools: bool) -> int:
    """Per object: centres of every frame (2F), boxes of every frame (4F), colour (4), shape (3),
    [tools: velocity, next and next-but-one positions (6)], present (1; always last)."""
    return 6 * frames + 7 + (6 if tools else 0) + 1


def question(items) -> dict:
    """skill id, up to two named objects (tokens 1..12, 0 pad) and the extreme word (0 none)."""
    n = len(items)
    skill = np.array([SKILL_ID[it.skill] for it in items], np.int64)
    objs = np.zeros((n, 2), np.int64)
    aux = np.zeros(n, np.int64)
    for i, it in enumerate(items):
        for j, o in enumerate(it.targets[:2]):
            objs[i, j] = obj_token(o)
        aux[i] = it.aux + 1
    return {"q_skill": skill, "q_obj": objs, "q_aux": aux}


def options(items) -> dict:
    """Per option: normalised geometry (points as (y, x, y, x), boxes as (y0, x0, y1, x1)), a
    geometry flag, an object flag and two categorical tokens."""
    n = len(items)
    geo = np.zeros((n, 4, 4), np.float32)
    isgeo = np.zeros((n, 4), np.float32)
    isobj = np.zeros((n, 4), np.float32)
    tok = np.zeros((n, 4, 2), np.int64)
    for i, it in enumerate(items):
        H = it.scene.height
        for k, o in enumerate(it.options):
            if it.kind == "point":
                geo[i, k] = (o[0] / H, o[1] / H, o[0] / H, o[1] / H)
                isgeo[i, k] = 1
            elif it.kind == "box":
                geo[i, k] = np.asarray(o, np.float32) / H
                isgeo[i, k] = 1
            elif it.kind == "dir":
                tok[i, k, 0] = TOK_DIR + o
            elif it.kind == "rel":
                tok[i, k, 0] = TOK_REL + o
            elif it.kind == "count":
                tok[i, k, 0] = TOK_CNT + o
            elif it.kind == "obj":
                tok[i, k, 0] = obj_token(o)
                isobj[i, k] = 1
            else:                               # objfree: (object, free)
                tok[i, k] = (obj_token(o[0]), TOK_FREE + int(o[1]))
                isobj[i, k] = 1
    return {"o_geo": geo, "o_isgeo": isgeo, "o_isobj": isobj, "o_tok": tok}


def slots(records: dict, frames: int, H: int, facts: dict | None = None) -> np.ndarray:
    """(N_SLOTS, slot_dim): objects in (colour, shape) order, zero-padded; positions / H."""
    out = np.zeros((N_SLOTS, slot_dim(frames, facts is not None)), np.float32)
    F2 = 2 * frames
    for s, o in enumerate(sorted(records)[:N_SLOTS]):
        r = records[o]
        c = np.asarray(r["centres"], np.float32)
        n = min(frames, len(c))
        out[s, :2 * n] = (c[:n] / H).ravel()
        out[s, F2:F2 + 4 * n] = (np.asarray(r["boxes"][:n], np.float32) / H).ravel()
        out[s, 6 * frames + o[0]] = 1
        out[s, 6 * frames + 4 + o[1]] = 1
        if facts is not None:
            out[s, 6 * frames + 7:6 * frames + 13] = np.concatenate(
                [facts["velocity"][o], facts["next1"][o], facts["next2"][o]]) / H
        out[s, -1] = 1
    return out


def object_list(item) -> np.ndarray:
    """Perfect perception: the ground-truth object list of every frame."""
    sc = item.scene
    return slots(W.gt_records(sc, masks=False), sc.frames, sc.height)


def tool_slots(records: dict, facts: dict, frames: int, H: int) -> np.ndarray:
    """The agent's tool-output input: the detected object list (as the oracle list) plus the
    spatial tool's velocity and next two positions per object (pairwise relations are computed
    by the scorer's relational grounding from the positions)."""
    return slots(records, frames, H, facts)


def item_arrays(items) -> dict:
    return {**question(items), **options(items),
            "key": np.array([it.key for it in items], np.int64)}
