"""Mini-BEAR: tiny rendered tabletop scenes and clips with multiple-choice skill items, a visual
tool, a spatial tool and a scripted oracle that answers from the tools' outputs alone.

A *scene* is an H x W RGB canvas (grey 0.5 plus N(0, noise_sd) pixel noise) holding 2-4 objects,
each a shape (square, disc, triangle) x colour (red, green, blue, yellow), side 4-6 px, with
unique (colour, shape) pairs, at least one pixel apart and one pixel from the border. A *clip*
has F frames in which exactly one object moves with a constant velocity of 1-2 px/frame in one of
8 directions; a static item repeats its frame F times.

Skills (12, in the six BEAR categories; the official benchmark has 14 subsets in 5 folders):

====  ==========================================================================================
P1    general-object pointing: which point lies on <colour shape>?  (4 candidate pixels)
P2    spatial-relation pointing: which point lies on the object nearest to A on its
      <left/right/upper/lower> side?  (BEAR's pointing/spatial_relationship; replaces the spec's
      "free space" item, not a BEAR skill; round 4: relative to a named object, see below)
B1    general-object box: which box encloses <colour shape>?  (4 candidate boxes)
B2    spatial-relation box: which box encloses the object nearest to A on its <left/...> side?
      (replaces the spec's counting item, not a BEAR skill)
T1    clip: in which direction does the moving object go?  (4 of 8 directions)
T2    clip: where will the moving object be in the next frame?  (4 candidate points)
S1    relation of A to B: left of / right of / above / below
S2    which object is closest to A?
K1    to place A next to B, which object must be moved first?  (A itself when nothing sits on
      it; else the object on top of it: the nearest object above A within |dx| <= 3 px of its
      column; options: A, B and two other objects, answer roles balanced)
K2    task progress: sorting the objects left to right by colour (red, green, blue, yellow; ties
      by shape square, disc, triangle), how many objects are already in their final slot?
      (options 0-3, answer balanced; BEAR's task-progress reasoning)
L1    clip: which object will the moving object be closest to 2 frames after the last one?
L2    pick the object left of A and place it above B: which object, and is the spot free?
====  ==========================================================================================

P/B items are drawn on 4-object scenes and every option lies on an object of the scene (one
option per object; round 4), so "is there an object under the candidate?" does not reject any
option. (Round 3's P2/B2 asked for the extreme object with distractors from independent scenes,
mostly on the background; with every option on an object, an extreme-object question is solved
from the options' coordinates alone, hence the relation to a named object A, whose position
only the image gives.)

The verifier is the answer key (the chosen option's index). Pointing and box items are also
scored the official way: a chosen point scores 1 when it lies in the target's mask, a chosen box
scores its IoU with the target's mask (``score``). Every reasoning item (T, S, K, L) carries its
perception sub-questions: a P1 and a B1 item, on frame 0 of the same scene, for each object it
mentions or needs.

World interface (see ``icml26.agents.worlds``): a task is an :class:`Item`; tools are
``visual`` (colour thresholding to the nearest palette colour, connected components with
``icml26.vision.metrics.count_components``, centroids of the components, shape from the fill
ratio of the component's box),
``spatial`` (from the detections: per-object velocity, extrapolated next positions, pairwise
relations and distances) and ``answer(k)`` (commits option k and ends the episode). The oracle
calls visual, then spatial, then answers by the skills' rules applied to the tool outputs only.
numpy + scipy only.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from scipy import ndimage

from icml26.agents.core import Call, Observation
from icml26.vision.metrics import count_components

COLOURS = ("red", "green", "blue", "yellow")
SHAPES = ("square", "disc", "triangle")
PALETTE = np.array([[0.95, 0.05, 0.05], [0.05, 0.95, 0.05], [0.05, 0.05, 0.95],
                    [0.95, 0.95, 0.05]], dtype=np.float32)
BACKGROUND = 0.5
# 8 directions as (dy, dx), y down: up, up-right, right, down-right, down, down-left, left, up-left
DIRECTIONS = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))
DIRECTION_NAMES = ("up", "up-right", "right", "down-right", "down", "down-left", "left",
                   "up-left")
RELATIONS = ("left of", "right of", "above", "below")
EXTREMES = ("leftmost", "rightmost", "topmost", "bottommost")
SKILLS = ("P1", "P2", "B1", "B2", "T1", "T2", "S1", "S2", "K1", "K2", "L1", "L2")
CATEGORY = {"P": "pointing", "B": "bounding box", "T": "trajectory", "S": "spatial",
            "K": "task planning", "L": "long-horizon"}
CLIP_SKILLS = ("T1", "T2", "L1")
COUNTS = (0, 1, 2, 3)
PERCEPTION_SKILLS = ("P1", "P2", "B1", "B2")
BLOCK_DX = 3          # K1: an object with another above it within 3 px of its column is blocked
# fill ratio of a component's box: square 1, disc 0.75-0.89, right triangle 0.58-0.63
FILL_SQUARE, FILL_DISC = 0.95, 0.68


def category(skill: str) -> str:
    return CATEGORY[skill[0]]


def stamp(shape: int, size: int) -> np.ndarray:
    """The boolean footprint of a shape of side ``size`` (its tight box is size x size)."""
    i, j = np.mgrid[:size, :size]
    if SHAPES[shape] == "square":
        return np.ones((size, size), bool)
    if SHAPES[shape] == "disc":
        c = (size - 1) / 2
        return (i - c) ** 2 + (j - c) ** 2 <= (size / 2) ** 2
    return j <= i                      # right triangle, right angle at the bottom left


_STAMPS = {(s, z): stamp(s, z) for s in range(3) for z in range(3, 13)}
_OFFSETS = {k: np.argwhere(v).mean(0) for k, v in _STAMPS.items()}


@dataclass
class Scene:
    """Objects (colour, shape, size) and their top-left corners per frame.

    ``pos`` has shape (n_objects, F + 2, 2): frames 0..F-1 are rendered, F and F + 1 are the
    moving object's next two positions (used by T2 and L1 answer keys only)."""

    colour: np.ndarray
    shape: np.ndarray
    size: np.ndarray
    pos: np.ndarray
    moving: int = -1
    velocity: tuple = (0, 0)
    height: int = 24
    width: int = 24

    @property
    def n(self) -> int:
        return len(self.colour)

    @property
    def frames(self) -> int:
        return self.pos.shape[1] - 2

    def ident(self, k: int) -> tuple:
        return (int(self.colour[k]), int(self.shape[k]))

    def centre(self, k: int, f: int = 0) -> np.ndarray:
        return self.pos[k, f] + _OFFSETS[(int(self.shape[k]), int(self.size[k]))]

    def box(self, k: int, f: int = 0) -> tuple:
        y, x = (int(v) for v in self.pos[k, f])
        z = int(self.size[k])
        return (y, x, y + z - 1, x + z - 1)

    def mask(self, k: int, f: int = 0) -> np.ndarray:
        m = np.zeros((self.height, self.width), bool)
        y, x = (int(v) for v in self.pos[k, f])
        z = int(self.size[k])
        m[y:y + z, x:x + z] = _STAMPS[(int(self.shape[k]), z)]
        return m

    def shifted(self, dy: int, dx: int) -> Scene:
        return replace(self, pos=self.pos + np.array([dy, dx]))


def render(scene: Scene, noise_seed: int, noise_sd: float = 0.05,
           shift: tuple = (0, 0)) -> np.ndarray:
    """(F, H, W, 3) float32 frames. The noise field is drawn from ``noise_seed`` and rolled by
    ``shift`` so that a translated item is the original image translated (objects stay inside:
    they keep one pixel from the border)."""
    F, H, W = scene.frames, scene.height, scene.width
    img = np.full((F, H, W, 3), BACKGROUND, np.float32)
    for f in range(F):
        for k in range(scene.n):
            y, x = (int(v) for v in scene.pos[k, f])
            z = int(scene.size[k])
            img[f, y:y + z, x:x + z][_STAMPS[(int(scene.shape[k]), z)]] = PALETTE[scene.colour[k]]
    rng = np.random.default_rng(noise_seed)
    static = scene.moving < 0
    noise = rng.normal(0.0, noise_sd, (1 if static else F, H, W, 3)).astype(np.float32)
    if shift != (0, 0):
        noise = np.roll(noise, shift, axis=(1, 2))
    return img + noise


@dataclass
class Item:
    """One multiple-choice question on a scene (a task of the world)."""

    uid: int
    skill: str
    scene: Scene
    targets: tuple            # (colour, shape) of the objects the question names
    aux: int                  # P2/B2: index into EXTREMES; else -1
    kind: str                 # option kind: point, box, dir, rel, obj, objfree
    options: list             # 4 options
    key: int                  # index of the right option
    noise_seed: int
    noise_sd: float = 0.05
    subs: list = field(default_factory=list)   # perception sub-questions (P1/B1 items)
    shift: tuple = (0, 0)
    image: np.ndarray | None = None

    def frames(self) -> np.ndarray:
        if self.image is None:
            return render(self.scene, self.noise_seed, self.noise_sd, self.shift)
        return self.image


# ----------------------------------------------------------------------------------------------
# records: what is known about each object (from the ground truth or from the visual tool)
# ----------------------------------------------------------------------------------------------
def gt_records(scene: Scene, masks: bool = True) -> dict:
    """{(colour, shape): {"centres": (F, 2), "boxes": [...], "mask0": (H, W)}} from the scene
    (``masks=False`` leaves out the frame-0 masks, which only pointing needs)."""
    out = {}
    F = scene.frames
    for k in range(scene.n):
        off = _OFFSETS[(int(scene.shape[k]), int(scene.size[k]))]
        out[scene.ident(k)] = {"centres": scene.pos[k, :F] + off,
                               "boxes": [scene.box(k, f) for f in range(F)],
                               "mask0": scene.mask(k, 0) if masks else None}
    return out


def spatial_facts(records: dict) -> dict:
    """The spatial tool: per object velocity (last two frames), next positions, and pairwise
    relations/distances in the last frame."""
    facts = {"velocity": {}, "next1": {}, "next2": {}, "relation": {}, "distance": {}}
    for o, r in records.items():
        c = r["centres"]
        v = c[-1] - c[-2] if len(c) > 1 else np.zeros(2)
        facts["velocity"][o] = v
        facts["next1"][o] = c[-1] + v
        facts["next2"][o] = c[-1] + 2 * v
    for a, ra in records.items():
        for b, rb in records.items():
            if a != b:
                d = ra["centres"][-1] - rb["centres"][-1]
                facts["relation"][(a, b)] = relation(ra["centres"][-1], rb["centres"][-1])
                facts["distance"][(a, b)] = float(np.hypot(*d))
    return facts


def relation(ca, cb) -> int:
    """Index into RELATIONS of A relative to B along the dominant axis."""
    dy, dx = ca[0] - cb[0], ca[1] - cb[1]
    if abs(dx) >= abs(dy):
        return 0 if dx < 0 else 1
    return 2 if dy < 0 else 3


def extreme(records: dict, which: int):
    """(colour, shape) of the leftmost / rightmost / topmost / bottommost object (frame 0)."""
    axis, sign = ((1, 1), (1, -1), (0, 1), (0, -1))[which]
    return min(records, key=lambda o: sign * records[o]["centres"][0][axis])


def related(records: dict, a, rel: int):
    """P2/B2: the object nearest to A among those in relation ``RELATIONS[rel]`` to A (dominant
    axis, frame 0); None if there is none."""
    ca = records[a]["centres"][0]
    cands = [o for o, r in records.items() if o != a and relation(r["centres"][0], ca) == rel]
    if not cands:
        return None
    return min(cands, key=lambda o: np.hypot(*(records[o]["centres"][0] - ca)))


def moving_object(records: dict):
    speeds = {o: np.abs(r["centres"][-1] - r["centres"][0]).sum() for o, r in records.items()}
    return max(speeds, key=speeds.get)


def direction_of(v) -> int:
    s = (int(np.sign(round(v[0], 6))), int(np.sign(round(v[1], 6))))
    return DIRECTIONS.index(s)


def closest(records: dict, point, exclude) -> tuple:
    others = [o for o in records if o not in exclude]
    d = [np.hypot(*(records[o]["centres"][-1] - point)) for o in others]
    return others[int(np.argmin(d))]


def blocked(records: dict, o) -> bool:
    """Another object sits above ``o`` within BLOCK_DX px of its column (frame 0)."""
    c = records[o]["centres"][0]
    return any(abs(r["centres"][0][1] - c[1]) <= BLOCK_DX and r["centres"][0][0] < c[0]
               for p, r in records.items() if p != o)


def blocker(records: dict, o):
    """The object on top of ``o``: the nearest object above it within BLOCK_DX px of its column
    (frame 0), None when ``o`` is free."""
    c = records[o]["centres"][0]
    above = [p for p, r in records.items() if p != o and abs(r["centres"][0][1] - c[1]) <= BLOCK_DX
             and r["centres"][0][0] < c[0]]
    if not above:
        return None
    return max(above, key=lambda p: records[p]["centres"][0][0])


def first_move(records: dict, a):
    """K1: A itself when free, else the object on top of it."""
    b = blocker(records, a)
    return a if b is None else b


def sort_first_move(records: dict):
    """Selection sort towards colour order (ties by shape): the object for the first wrong slot."""
    now = sorted(records, key=lambda o: records[o]["centres"][0][1])
    want = sorted(records)
    for a, b in zip(now, want, strict=True):
        if a != b:
            return b
    return None


def in_place(records: dict) -> int:
    """K2 (task progress): objects already in their final slot of the left-to-right colour
    sort (colour order, ties by shape)."""
    now = sorted(records, key=lambda o: records[o]["centres"][0][1])
    return sum(a == b for a, b in zip(now, sorted(records), strict=True))


def left_of(records: dict, a):
    """The nearest object left of A within 45 degrees of the horizontal (None if none)."""
    ca = records[a]["centres"][0]
    cands = [o for o, r in records.items() if o != a and r["centres"][0][1] <= ca[1] - 3
             and abs(r["centres"][0][0] - ca[0]) <= abs(r["centres"][0][1] - ca[1])]
    if not cands:
        return None
    return min(cands, key=lambda o: np.hypot(*(records[o]["centres"][0] - ca)))


def spot_above(records: dict, b, height: int, width: int) -> tuple:
    """The 6 x 6 region directly above B's box: (y0, x0, y1, x1), possibly outside the canvas."""
    y0, x0, y1, x1 = records[b]["boxes"][0]
    cx = (x0 + x1) // 2                 # from the integer box: no rounding of centroids
    return (y0 - 6, cx - 2, y0 - 1, cx + 3)


def spot_free(records: dict, b, skip, height: int, width: int) -> bool:
    y0, x0, y1, x1 = spot_above(records, b, height, width)
    if y0 < 0 or x0 < 0 or y1 >= height or x1 >= width:
        return False
    for o, r in records.items():
        if o in (b, skip):
            continue
        by0, bx0, by1, bx1 = r["boxes"][0]
        if not (by1 < y0 or by0 > y1 or bx1 < x0 or bx0 > x1):
            return False
    return True


def box_iou_mask(box, mask: np.ndarray) -> float:
    """IoU of a box (inclusive pixel edges, clipped to the canvas) with a mask (official bbox
    metric: the box rasterised against the ground-truth mask)."""
    b = np.zeros_like(mask)
    y0, x0, y1, x1 = (int(v) for v in box)
    b[max(y0, 0):max(y1 + 1, 0), max(x0, 0):max(x1 + 1, 0)] = True
    union = np.logical_or(b, mask).sum()
    return float(np.logical_and(b, mask).sum() / union) if union else 0.0


# ----------------------------------------------------------------------------------------------
# answering from records (the oracle's rules; the generator builds keys with the same rules on
# the ground truth, and the tests check them on hand-built scenes)
# ----------------------------------------------------------------------------------------------
def solve(item: Item, records: dict, facts: dict, height: int, width: int) -> int:
    s, opts = item.skill, item.options
    if s in ("P1", "P2", "B1", "B2"):
        t = item.targets[0] if s in ("P1", "B1") else related(records, item.targets[0], item.aux)
        if s[0] == "P":
            m = records[t]["mask0"]
            hits = [k for k, (y, x) in enumerate(opts) if 0 <= y < height and 0 <= x < width
                    and m[int(y), int(x)]]
            return hits[0] if hits else -1
        return opts.index(tuple(records[t]["boxes"][0])) if tuple(records[t]["boxes"][0]) in opts \
            else -1
    if s == "T1":
        return opts.index(direction_of(facts["velocity"][moving_object(records)]))
    if s == "T2":
        p = facts["next1"][moving_object(records)]
        return int(np.argmin([np.hypot(p[0] - y, p[1] - x) for y, x in opts]))
    if s == "S1":
        a, b = item.targets
        return opts.index(relation(records[a]["centres"][-1], records[b]["centres"][-1]))
    if s == "S2":
        a = item.targets[0]
        return opts.index(closest(records, records[a]["centres"][-1], {a}))
    if s == "K1":
        return opts.index(first_move(records, item.targets[0]))
    if s == "K2":
        return opts.index(in_place(records))
    if s == "L1":
        m = moving_object(records)
        return opts.index(closest(records, facts["next2"][m], {m}))
    if s == "L2":
        a, b = item.targets
        x = left_of(records, a)
        return opts.index((x, spot_free(records, b, x, height, width)))
    raise ValueError(f"unknown skill {s!r}")


# ----------------------------------------------------------------------------------------------
# the tools
# ----------------------------------------------------------------------------------------------
def detect(frames: np.ndarray) -> list:
    """Visual tool: per frame, a list of detections {colour, shape, box, centre, mask}.

    Each pixel takes the nearest palette colour or the background (a threshold halfway between
    them: 7.8 noise s.d. at the default noise); the 8-connected components of the non-background
    pixels are the objects (objects never touch), each with its majority colour; the shape is
    read from the fill ratio of the component's tight box. A frame identical to the previous
    one gets the same detections (static items repeat their frame)."""
    cols = np.concatenate([PALETTE, np.full((1, 3), BACKGROUND, np.float32)])
    out = []
    for f, fr in enumerate(frames):
        if f and np.array_equal(fr, frames[f - 1]):
            out.append(out[-1])
            continue
        d = ((fr[:, :, None, :] - cols[None, None]) ** 2).sum(-1)
        lab = d.argmin(-1)
        labels, n = count_components(lab < len(PALETTE))
        flat = labels.ravel()
        cnt = np.bincount(flat, minlength=n + 1)
        yy, xx = np.divmod(np.arange(flat.size), fr.shape[1])
        cents = np.stack([np.bincount(flat, yy, n + 1), np.bincount(flat, xx, n + 1)], 1)[1:] \
            / np.maximum(cnt[1:, None], 1)
        dets = []
        for j, sl in enumerate(ndimage.find_objects(labels)):
            m = labels == j + 1
            colour = int(np.bincount(lab[m], minlength=len(PALETTE)).argmax())
            box = (sl[0].start, sl[1].start, sl[0].stop - 1, sl[1].stop - 1)
            fill = cnt[j + 1] / ((box[2] - box[0] + 1) * (box[3] - box[1] + 1))
            shape = 0 if fill >= FILL_SQUARE else (1 if fill >= FILL_DISC else 2)
            dets.append({"colour": colour, "shape": shape, "box": box, "centre": cents[j],
                         "mask": m})
        out.append(dets)
    return out


def records_from_detections(dets: list) -> dict:
    """Objects matched across frames by (colour, shape) (unique in a scene); an object missing
    from a frame keeps its last seen position."""
    recs: dict = {}
    for f, frame in enumerate(dets):
        for d in frame:
            o = (d["colour"], d["shape"])
            r = recs.setdefault(o, {"centres": [], "boxes": [], "mask0": d["mask"], "first": f})
            r["centres"].append(np.asarray(d["centre"], float))
            r["boxes"].append(tuple(int(v) for v in d["box"]))
    for r in recs.values():
        r["centres"] = np.array(r["centres"])
    return recs


# ----------------------------------------------------------------------------------------------
# the world
# ----------------------------------------------------------------------------------------------
class ScenesWorld:
    """Tasks are :class:`Item`; tools: ``visual``, ``spatial``, ``answer(k)``.

    ``cache=True`` memoises the tools' outputs per (item uid, shift) so that several policies
    can be run over the same items without recomputing the detections (the calls are still
    charged to each trajectory)."""

    TOOLS = ("visual", "spatial", "answer")
    DET_TOKENS, OBJ_TOKENS, PAIR_TOKENS = 8, 6, 2

    def __init__(self, cache: bool = False):
        self.cache = {} if cache else None

    def start(self, task: Item) -> dict:
        return {"item": task, "records": None, "facts": None}

    def _tool(self, name, item, fn):
        if self.cache is None:
            return fn()
        k = (name, item.uid, item.shift)
        if k not in self.cache:
            self.cache[k] = fn()
        return self.cache[k]

    def execute(self, state: dict, call: Call) -> Observation:
        item = state["item"]
        if call.tool == "visual":
            dets = self._tool("visual", item, lambda: detect(item.frames()))
            state["records"] = records_from_detections(dets)
            return Observation(dets, tokens=self.DET_TOKENS * sum(len(d) for d in dets))
        if call.tool == "spatial":
            if state["records"] is None:
                return Observation("error: run the visual tool first", ok=False, tokens=4)
            state["facts"] = self._tool("spatial", item,
                                        lambda: spatial_facts(state["records"]))
            n = len(state["records"])
            return Observation(state["facts"],
                               tokens=self.OBJ_TOKENS * n + self.PAIR_TOKENS * n * (n - 1))
        if call.tool == "answer":
            k = call.args[0] if call.args else None
            if not isinstance(k, (int, np.integer)) or not 0 <= int(k) < len(item.options):
                return Observation("error: answer must be an option index", ok=False, tokens=2)
            return Observation(None, final=True, answer=int(k), tokens=1)
        return Observation(f"error: unknown tool {call.tool!r}", ok=False, tokens=2)

    def verify(self, task: Item, answer) -> bool:
        return answer is not None and int(answer) == task.key

    def cost(self, call: Call) -> dict:
        """One token for the call; FLOPs of the classical tools (pixels x palette x channels for
        the visual tool, object pairs for the spatial tool); answering is free."""
        if call.tool == "visual":
            return {"tokens": 1, "flops": 24.0 * 24 * 4 * 5 * 3 * 3}
        if call.tool == "spatial":
            return {"tokens": 1, "flops": 16.0 * 8}
        return {"tokens": 1, "flops": 0.0}

    def oracle(self, task: Item, state: dict) -> Call:
        if state["records"] is None:
            return Call("visual")
        if state["facts"] is None:
            return Call("spatial")
        H, W = task.scene.height, task.scene.width
        return Call("answer", (solve(task, state["records"], state["facts"], H, W),))

    @staticmethod
    def score(task: Item, answer) -> float:
        """Official per-item score: hit-in-mask (P), IoU with the mask (B), else exact match;
        no answer scores 0 (failures count everywhere, also for boxes)."""
        if answer is None or not 0 <= int(answer) < len(task.options):
            return 0.0
        opt = task.options[int(answer)]
        if task.skill in ("P1", "P2", "B1", "B2"):
            recs = gt_records(task.scene)
            t = task.targets[0] if task.skill in ("P1", "B1") else \
                related(recs, task.targets[0], task.aux)
            m = recs[t]["mask0"]
            if task.skill[0] == "P":
                y, x = int(opt[0]), int(opt[1])
                H, W = m.shape
                return float(0 <= y < H and 0 <= x < W and m[y, x])
            return box_iou_mask(opt, m)
        return float(int(answer) == task.key)


# ----------------------------------------------------------------------------------------------
# the generator
# ----------------------------------------------------------------------------------------------
class Generator:
    """Seeded Mini-BEAR item generator (``make(skill)``; ``items(skills, n)``)."""

    def __init__(self, rng: np.random.Generator, height: int = 24, width: int = 24,
                 frames: int = 4, n_objects=(2, 4), sizes=(4, 6), speeds=(1, 2),
                 noise_sd: float = 0.05):
        self.rng, self.H, self.W, self.F = rng, height, width, frames
        self.n_objects, self.sizes, self.speeds, self.noise_sd = n_objects, sizes, speeds, noise_sd
        self.uid = 0
        self.with_subs = True       # False: no perception sub-questions (e.g. a training pool)

    # scenes -----------------------------------------------------------------------------------
    def scene(self, n_min: int = 2, clip: bool = False) -> Scene | None:
        r = self.rng
        n = int(r.integers(max(n_min, self.n_objects[0]), self.n_objects[1] + 1))
        kinds = r.permutation(len(COLOURS) * len(SHAPES))[:n]
        colour, shape = kinds // len(SHAPES), kinds % len(SHAPES)
        size = r.integers(self.sizes[0], self.sizes[1] + 1, n)
        F = self.F
        pos = np.zeros((n, F + 2, 2), int)
        moving, vel = -1, (0, 0)
        if clip:
            moving = 0
            d = DIRECTIONS[int(r.integers(8))]
            sp = int(r.integers(self.speeds[0], self.speeds[1] + 1))
            vel = (d[0] * sp, d[1] * sp)
        corners = []
        for k in range(n):
            z = int(size[k])
            vy, vx = vel if k == moving else (0, 0)
            n_pos = F + 2 if k == moving else 1
            lo_y, hi_y = 1 - min(0, vy * (F + 1)), self.H - 1 - z - max(0, vy * (F + 1))
            lo_x, hi_x = 1 - min(0, vx * (F + 1)), self.W - 1 - z - max(0, vx * (F + 1))
            if hi_y < lo_y or hi_x < lo_x:
                return None
            for y0, x0 in zip(r.integers(lo_y, hi_y + 1, 60).tolist(),
                              r.integers(lo_x, hi_x + 1, 60).tolist(), strict=True):
                traj = [(y0 + f * vy, x0 + f * vx) for f in range(F)]
                if all(self._apart(traj, z, corners[j] if len(corners[j]) == F
                                   else corners[j] * F, int(size[j])) for j in range(k)):
                    pos[k] = [(y0 + f * vy, x0 + f * vx) for f in range(F + 2)]
                    corners.append(traj if n_pos > 1 else traj[:1])
                    break
            else:
                return None
        return Scene(colour, shape, size, pos, moving, vel, self.H, self.W)

    @staticmethod
    def _clear_columns(rec, objs, margin: float = 0.5) -> bool:
        """No object sits on the edge of the K1 blocking rule (|dx| = BLOCK_DX or dy = 0)."""
        for o in objs:
            c = rec[o]["centres"][0]
            for p, r in rec.items():
                if p != o:
                    d = r["centres"][0] - c
                    if abs(abs(d[1]) - BLOCK_DX) < margin or abs(d[0]) < margin:
                        return False
        return True

    @staticmethod
    def _clear_left(rec, a, x, margin: float = 0.5) -> bool:
        """No object on the edge of L2's left-of cone, and the nearest one is clear."""
        ca = rec[a]["centres"][0]
        dist = []
        for o, r in rec.items():
            if o == a:
                continue
            d = r["centres"][0] - ca
            if abs(abs(d[0]) - abs(d[1])) < margin or abs(d[1] + 3) < margin:
                return False
            if d[1] <= -3 and abs(d[0]) <= abs(d[1]):
                dist.append(np.hypot(*d))
        dist.sort()
        return len(dist) < 2 or dist[1] - dist[0] >= margin

    @staticmethod
    def _apart(ta, za, tb, zb) -> bool:
        """Boxes at least one pixel apart in every frame (lists of (y, x) corners)."""
        for (ya, xa), (yb, xb) in zip(ta, tb, strict=True):
            if max(ya - yb - zb, yb - ya - za, xa - xb - zb, xb - xa - za) < 1:
                return False
        return True

    # options ------------------------------------------------------------------------------------
    def _point_on(self, scene: Scene, j: int) -> tuple:
        pts = np.argwhere(scene.mask(j, 0))
        return tuple(int(v) for v in pts[self.rng.integers(len(pts))])

    def _shuffle(self, right, wrong: list):
        opts = [right] + list(wrong)
        order = self.rng.permutation(len(opts))
        opts = [opts[i] for i in order]
        return opts, int(np.argmax(order == 0))

    def _absent(self, scene: Scene, k: int) -> list:
        present = {scene.ident(j) for j in range(scene.n)}
        rest = [(c, s) for c in range(4) for s in range(3) if (c, s) not in present]
        pick = self.rng.choice(len(rest), k, replace=False)
        return [rest[i] for i in pick]

    def _names(self, scene: Scene, right, others: list):
        wrong = list(others)[:3]
        wrong += self._absent(scene, 3 - len(wrong))
        return self._shuffle(right, wrong)

    def _item(self, skill, scene, targets, aux, kind, opts, key, subs=()) -> Item:
        self.uid += 1
        return Item(self.uid, skill, scene, tuple(targets), aux, kind, opts, key,
                    int(self.rng.integers(2**62)), self.noise_sd, list(subs))

    def _decoy(self, aux: int):
        """An independent static scene and an object of it: a random one (aux < 0) or its
        extreme object ``EXTREMES[aux]`` (the distractor source of P/B items)."""
        while True:
            sc = self.scene(2, False)
            if sc is not None:
                break
        if aux < 0:
            k = int(self.rng.integers(sc.n))
        else:
            axis, sign = ((1, 1), (1, -1), (0, 1), (0, -1))[aux]
            k = int(np.argmin([sign * sc.centre(i)[axis] for i in range(sc.n)]))
        self._decoy_k = k
        return sc, k

    def _twin(self, box) -> tuple:
        """The box shifted by 2-3 px in one of 8 directions (a distractor's near miss)."""
        dy, dx = DIRECTIONS[int(self.rng.integers(8))]
        sh = int(self.rng.integers(2, 4))
        return (box[0] + sh * dy, box[1] + sh * dx, box[2] + sh * dy, box[3] + sh * dx)

    def perception(self, skill: str, scene: Scene, j: int, aux: int = -1,
                   anchor=None) -> Item | None:
        """A P1/P2/B1/B2 item on object j (frame 0). Round 4: every distractor lies on another
        object of the scene (a point on it / its box), one per object, so that no option can be
        rejected for lying on the background; P/B items proper are drawn on 4-object scenes. A
        sub-question on a 2-3-object scene fills the remaining slots as far as the scene allows
        with the older scheme (P1: points on a random object of independent scenes, off the
        target; B1: near-miss twins, shifted 2-3 px, of the target's and another object's box).
        ``anchor`` (P2/B2): the named object A (its options are A and the other objects)."""
        r = self.rng
        others = [int(i) for i in r.permutation(scene.n) if i != j]
        if skill[0] == "P":
            right = self._point_on(scene, j)
            wrong = [self._point_on(scene, i) for i in others[:3]]
            m = scene.mask(j, 0)
            while len(wrong) < 3:
                sc, k = self._decoy(-1)
                p = self._point_on(sc, k)
                if not m[p] and p != right and p not in wrong:
                    wrong.append(p)
            opts, key = self._shuffle(right, wrong)
            kind = "point"
        else:
            right = scene.box(j)
            wrong = [scene.box(i) for i in others[:3]]
            if len(wrong) < 3:
                wrong.append(self._twin(right))
            if len(wrong) < 3:
                wrong.append(self._twin(wrong[0]))
            if len(set(wrong + [right])) < 4:
                return None
            opts, key = self._shuffle(right, wrong)
            kind = "box"
        t = [anchor] if skill in ("P2", "B2") else [scene.ident(j)]
        return self._item(skill, scene, t, aux, kind, opts, key)

    def _subs(self, scene: Scene, objs) -> list:
        if not self.with_subs:
            return []
        idx = {scene.ident(j): j for j in range(scene.n)}
        out = []
        for o in dict.fromkeys(objs):
            for sk in ("P1", "B1"):
                for _ in range(20):
                    it = self.perception(sk, scene, idx[o])
                    if it is not None:
                        break
                out.append(it)
        return out

    # skills -------------------------------------------------------------------------------------
    def make(self, skill: str) -> Item:
        want = int(self.rng.integers(4))       # K1 answer role / K2 count, drawn once: balanced
        # P2/B2: the answer's rank along the relation's axis among the options (0..2; 3 is
        # impossible, A lies behind the answer), drawn once: uniform, so the options' order
        # does not point at the answer (round 4)
        self._rank = int(self.rng.integers(3)) if skill in ("P2", "B2") else 0
        for _ in range(2000):
            it = self._try(skill, want)
            if it is not None:
                return it
        raise RuntimeError(f"could not generate a {skill} item")

    def _try(self, skill: str, want: int = 0) -> Item | None:
        r = self.rng
        clip = skill in CLIP_SKILLS
        n_min = {"S2": 3, "K1": 3, "L1": 3, "L2": 3, "P1": 4, "P2": 4, "B1": 4,
                 "B2": 4}.get(skill, 2)
        sc = self.scene(n_min, clip)
        if sc is None:
            return None
        rec = gt_records(sc, masks=False)
        ids = [sc.ident(j) for j in range(sc.n)]
        if skill in ("P1", "B1"):
            return self.perception(skill, sc, int(r.integers(sc.n)), -1)
        if skill in ("P2", "B2"):
            # the object nearest to A in relation RELATIONS[aux] to A; every relation of A to the
            # others must be clear (dominant axis by >= 2 px) and the nearest one by >= 1 px
            aux = int(r.integers(4))
            a = ids[int(r.integers(sc.n))]
            ca = rec[a]["centres"][0]
            for o in ids:
                d = rec[o]["centres"][0] - ca
                if o != a and abs(abs(d[0]) - abs(d[1])) < 2:
                    return None
            t = related(rec, a, aux)
            if t is None:
                return None
            d = sorted(np.hypot(*(rec[o]["centres"][0] - ca)) for o in ids
                       if o != a and relation(rec[o]["centres"][0], ca) == aux)
            if len(d) > 1 and d[1] - d[0] < 1:
                return None
            axis, sign = ((1, 1), (1, -1), (0, 1), (0, -1))[aux]
            along = sorted(sign * rec[o]["centres"][0][axis] for o in ids)
            if along.index(sign * rec[t]["centres"][0][axis]) != self._rank or \
                    min(np.diff(along)) < 1:
                return None
            return self.perception(skill, sc, ids.index(t), aux, anchor=a)
        facts = spatial_facts(rec)
        if skill == "T1":
            m = ids[sc.moving]
            right = direction_of(facts["velocity"][m])
            wrong = [int(d) for d in r.choice([d for d in range(8) if d != right], 3,
                                              replace=False)]
            opts, key = self._shuffle(right, wrong)
            return self._item(skill, sc, [], -1, "dir", opts, key, self._subs(sc, [m]))
        if skill == "T2":
            m = ids[sc.moving]
            c, v = rec[m]["centres"][-1], facts["velocity"][m]
            right = tuple(c + v)
            # distractors: the next position under other velocities of the same distribution
            vels = {(d[0] * sp, d[1] * sp) for d in DIRECTIONS
                    for sp in range(self.speeds[0], self.speeds[1] + 1)}
            vels = sorted(vels - {(int(v[0]), int(v[1]))})
            # round 4: never a position the object held in a shown frame (the reversed velocity
            # lands on the previous frame's centre, which the stacked frames show as an object)
            # nor, unlike the answer, on the object's mask in an earlier frame
            past = rec[m]["centres"]
            j = ids.index(m)
            trail = np.zeros((sc.height, sc.width), bool)
            for f in range(sc.frames - 1):
                trail |= sc.mask(j, f)

            def on_trail(p):
                y, x = int(round(p[0])), int(round(p[1]))
                return bool(0 <= y < sc.height and 0 <= x < sc.width and trail[y, x])

            vels = [u for u in vels if np.min(np.hypot(*(past - (c + np.array(u))).T)) >= 0.5
                    and on_trail(c + np.array(u)) == on_trail(right)]
            if len(vels) < 3:
                return None
            wrong = [tuple(c + np.array(vels[i])) for i in r.choice(len(vels), 3, replace=False)]
            opts, key = self._shuffle(right, wrong)
            return self._item(skill, sc, [], -1, "point", opts, key, self._subs(sc, [m]))
        if skill == "S1":
            a, b = (ids[i] for i in r.permutation(sc.n)[:2])
            d = rec[a]["centres"][0] - rec[b]["centres"][0]
            if abs(abs(d[0]) - abs(d[1])) < 2:  # the dominant axis must be clear
                return None
            right = relation(rec[a]["centres"][0], rec[b]["centres"][0])
            return self._item(skill, sc, [a, b], -1, "rel", list(range(4)), right,
                              self._subs(sc, [a, b]))
        if skill == "S2":
            a = ids[int(r.integers(sc.n))]
            d = sorted(facts["distance"][(a, o)] for o in ids if o != a)
            if d[1] - d[0] < 1:
                return None
            right = closest(rec, rec[a]["centres"][0], {a})
            opts, key = self._names(sc, right, [o for o in ids if o not in (a, right)])
            return self._item(skill, sc, [a], -1, "obj", opts, key, self._subs(sc, [a, right]))
        if skill == "K1":
            # answer role balanced over the options {A, B, other, other}: A 1/4, B 1/4, else 1/2
            role = ("A", "B", "other", "other")[want]
            a = ids[int(r.integers(sc.n))]
            if not self._clear_columns(rec, (a,)):
                return None
            right = first_move(rec, a)
            above = sorted(rec[p]["centres"][0][0] for p in ids if p != a
                           and abs(rec[p]["centres"][0][1] - rec[a]["centres"][0][1]) <= BLOCK_DX
                           and rec[p]["centres"][0][0] < rec[a]["centres"][0][0])
            if len(above) > 1 and above[-1] - above[-2] < 1:
                return None                     # the object on top must be clear
            if (role == "A") != (right == a):
                return None
            rest = [o for o in ids if o not in (a, right)]
            if role == "B":
                b = right
            elif rest:
                b = rest[int(r.integers(len(rest)))]
            else:
                return None
            others = [o for o in ids if o not in (a, b, right)]
            wrong = [o for o in (a, b) if o != right] + others
            opts, key = self._names(sc, right, wrong)      # A and B are always offered
            return self._item(skill, sc, [a, b], -1, "obj", opts, key,
                              self._subs(sc, [a, b, right]))
        if skill == "K2":
            xs = sorted(rec[o]["centres"][0][1] for o in ids)
            if min(np.diff(xs)) < 1:
                return None
            if in_place(rec) != COUNTS[want]:
                return None
            return self._item(skill, sc, [], -1, "count", list(COUNTS), want,
                              self._subs(sc, ids))
        if skill == "L1":
            m = ids[sc.moving]
            p = facts["next2"][m]
            d = sorted(np.hypot(*(rec[o]["centres"][-1] - p)) for o in ids if o != m)
            if d[1] - d[0] < 1:
                return None
            right = closest(rec, p, {m})
            opts, key = self._names(sc, right, [o for o in ids if o not in (m, right)])
            return self._item(skill, sc, [], -1, "obj", opts, key, self._subs(sc, [m, right]))
        if skill == "L2":
            a = ids[int(r.integers(sc.n))]
            x = left_of(rec, a)
            if x is None or not self._clear_left(rec, a, x):
                return None
            bs = [o for o in ids if o not in (a, x)]
            b = bs[int(r.integers(len(bs)))]
            y0, x0, y1, x1 = spot_above(rec, b, sc.height, sc.width)
            if y0 < 1 or x0 < 1 or y1 > sc.height - 2 or x1 > sc.width - 2:
                return None                     # the spot is inside the canvas, 1 px clear
            free = spot_free(rec, b, x, sc.height, sc.width)
            if free != bool(want % 2):          # balance free / not free: the target is drawn
                return None                     # once per item (round 4; a coin per try kept
                                                # the natural ~70% free and cued the answer)
            # the other object is never one the question names (else x would be given away)
            y = [o for o in ids if o not in (x, a, b)]
            y = y[int(r.integers(len(y)))] if y and r.random() < 0.5 else self._absent(sc, 1)[0]
            right = (x, free)
            wrong = [(x, not free), (y, free), (y, not free)]
            opts, key = self._shuffle(right, wrong)
            return self._item(skill, sc, [a, b], -1, "objfree", opts, key,
                              self._subs(sc, [a, b, x]))
        raise ValueError(f"unknown skill {skill!r}")

    def items(self, skills, n_per_skill: int) -> list:
        return [self.make(s) for s in skills for _ in range(n_per_skill)]

    def mixed(self, skills, n: int, subs: bool = True) -> list:
        """n items drawn uniformly over the skills (a training pool); ``subs=False`` skips the
        perception sub-questions (only the diagnosis of test items needs them)."""
        self.with_subs = subs
        try:
            return [self.make(skills[int(self.rng.integers(len(skills)))]) for _ in range(n)]
        finally:
            self.with_subs = True


def translate(item: Item, dy: int, dx: int) -> Item:
    """The item with every frame translated by (dy, dx) px (options move along; same key)."""
    sc = item.scene.shifted(dy, dx)

    def mv(o):
        if item.kind == "point":
            return (o[0] + dy, o[1] + dx)
        if item.kind == "box":
            return (o[0] + dy, o[1] + dx, o[2] + dy, o[3] + dx)
        return o

    return replace(item, scene=sc, options=[mv(o) for o in item.options],
                   shift=(item.shift[0] + dy, item.shift[1] + dx), image=None,
                   subs=[translate(s, dy, dx) for s in item.subs])
