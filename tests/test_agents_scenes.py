"""Mini-BEAR scenes world: the scripted oracle solves every skill from the tools' outputs alone,
the visual tool recovers every object on clean scenes, and the answer keys are right on
hand-built scenes."""
import numpy as np
import pytest

from icml26.agents import Budget, Call, oracle_rate, run_batch, run_episode
from icml26.agents.worlds import scenes as W


def _scene(objs, frames=4, moving=-1, vel=(0, 0), size=24):
    """objs: (colour, shape, side, y, x) top-left corners; the moving object is index ``moving``."""
    n = len(objs)
    pos = np.zeros((n, frames + 2, 2), int)
    for k, (_, _, _, y, x) in enumerate(objs):
        for f in range(frames + 2):
            pos[k, f] = (y + (vel[0] * f if k == moving else 0),
                         x + (vel[1] * f if k == moving else 0))
    return W.Scene(np.array([o[0] for o in objs]), np.array([o[1] for o in objs]),
                   np.array([o[2] for o in objs]), pos, moving, vel, size, size)


def _item(skill, scene, targets=(), aux=-1, kind="obj", options=(), key=0):
    return W.Item(1, skill, scene, tuple(targets), aux, kind, list(options), key, 7)


@pytest.fixture(scope="module")
def items():
    g = W.Generator(np.random.default_rng(3))
    return {s: [g.make(s) for _ in range(25)] for s in W.SKILLS}


@pytest.mark.parametrize("skill", W.SKILLS)
def test_oracle_solves_every_skill_from_tool_outputs(items, skill):
    w = W.ScenesWorld()
    its = items[skill]
    assert oracle_rate(w, its, max_steps=10) == 1.0
    subs = [s for it in its for s in it.subs]
    assert not subs or oracle_rate(w, subs, max_steps=10) == 1.0
    shifted = [W.translate(it, 0, -1) for it in its]
    assert oracle_rate(w, shifted, max_steps=10) == 1.0
    # the oracle uses exactly the two tools and the answer, all charged to the budget
    tr = run_batch(w, its[:3], lambda st, trs, live: [w.oracle(its[i], s) for i, s in
                                                       zip(live, st, strict=True)],
                   max_steps=10, budgets=[Budget(calls=10) for _ in range(3)])
    assert all(t.actions() == ["visual", "spatial", "answer"] and t.success for t in tr)


def test_visual_tool_recovers_colour_shape_box_and_centre(items):
    for its in items.values():
        for it in its[:10]:
            dets = W.detect(it.frames())
            gt = W.gt_records(it.scene)
            for f, frame in enumerate(dets):
                got = {(d["colour"], d["shape"]): d for d in frame}
                assert set(got) == set(gt)
                for o, r in gt.items():
                    assert got[o]["box"] == r["boxes"][f]
                    assert np.allclose(got[o]["centre"], r["centres"][f], atol=1e-9)


def test_shapes_separate_by_fill_ratio():
    for z in (4, 5, 6):
        fills = [W.stamp(s, z).mean() for s in range(3)]
        assert fills[0] == 1.0 and W.FILL_DISC <= fills[1] < W.FILL_SQUARE
        assert fills[2] < W.FILL_DISC


def test_answer_keys_on_hand_built_scenes():
    red_sq, green_disc, blue_tri = (0, 0), (1, 1), (2, 2)
    # red square top-left (2, 2), green disc far right (2, 16), blue triangle below red (14, 3)
    sc = _scene([(0, 0, 4, 2, 2), (1, 1, 5, 2, 16), (2, 2, 6, 14, 3)])
    rec = W.gt_records(sc)
    assert np.allclose(rec[red_sq]["centres"][0], (3.5, 3.5))
    assert W.relation(rec[red_sq]["centres"][0], rec[green_disc]["centres"][0]) == 0   # left of
    assert W.relation(rec[blue_tri]["centres"][0], rec[red_sq]["centres"][0]) == 3     # below
    assert W.extreme(rec, 0) == blue_tri or W.extreme(rec, 0) == red_sq
    assert W.extreme(rec, 1) == green_disc and W.extreme(rec, 3) == blue_tri
    # the closest object to the red square is the blue triangle (dist ~11.4 vs 13)
    assert W.closest(rec, rec[red_sq]["centres"][0], {red_sq}) == blue_tri
    # blue triangle is blocked (red square above it within 3 px of its column), red is not
    assert W.blocked(rec, blue_tri) and not W.blocked(rec, red_sq)
    k1 = _item("K1", sc, [blue_tri, red_sq], options=[blue_tri, red_sq, green_disc, (3, 0)],
               key=1)
    w = W.ScenesWorld()
    assert run_episode(w, k1, lambda s, t: w.oracle(k1, s), max_steps=5).success
    # sort by colour (red, green, blue): x order is red(3.5), blue(~5), green(18) -> slot 1
    # holds blue, so green is moved first
    assert W.sort_first_move(rec) == green_disc
    # K2 (task progress): only the red square is already in its final slot
    assert W.in_place(rec) == 1
    # K1: the red square sits on the blue triangle, so it is moved first; the red square is free
    assert W.first_move(rec, blue_tri) == red_sq and W.first_move(rec, red_sq) == red_sq
    # pointing: a point on the disc hits its mask, the box of the disc has IoU = its fill
    p1 = _item("P1", sc, [green_disc], kind="point",
               options=[(4, 18), (3, 3), (20, 20), (10, 10)], key=0)
    assert W.ScenesWorld.score(p1, 0) == 1.0 and W.ScenesWorld.score(p1, 2) == 0.0
    b1 = _item("B1", sc, [green_disc], kind="box",
               options=[(2, 16, 6, 20), (4, 18, 8, 22), (2, 2, 5, 5), (15, 15, 19, 19)], key=0)
    assert W.ScenesWorld.score(b1, 0) == pytest.approx(21 / 25)
    # shifted box rows 4..8, cols 18..22 covers 8 disc pixels: IoU = 8 / (25 + 21 - 8)
    assert W.ScenesWorld.score(b1, 1) == pytest.approx(8 / 38)
    assert W.ScenesWorld.score(b1, 2) == 0.0


def test_trajectory_keys_on_a_hand_built_clip():
    # red square moves right 2 px / frame from (10, 2); green disc static at (10, 17)
    sc = _scene([(0, 0, 4, 10, 2), (1, 1, 4, 10, 17)], moving=0, vel=(0, 2))
    rec = W.gt_records(sc)
    facts = W.spatial_facts(rec)
    assert W.moving_object(rec) == (0, 0)
    assert W.DIRECTION_NAMES[W.direction_of(facts["velocity"][(0, 0)])] == "right"
    # last frame centre x = 3.5 + 6 = 9.5; next = 11.5; two more frames = 13.5
    assert np.allclose(facts["next1"][(0, 0)], (11.5, 11.5))
    assert np.allclose(facts["next2"][(0, 0)], (11.5, 13.5))
    t1 = _item("T1", sc, kind="dir", options=[0, 2, 4, 6], key=1)
    w = W.ScenesWorld()
    assert run_episode(w, t1, lambda s, t: w.oracle(t1, s), max_steps=5).success
    wrong = run_episode(w, t1, lambda s, t: Call("answer", (0,)), max_steps=5)
    assert wrong.stop == "final" and not wrong.success


def test_left_of_and_spot_free():
    # A = red square at (12, 14); X = green disc left of it at (12, 4); B = blue triangle at
    # (19, 8), centre (21, 9): below-left of A, outside the 45-degree left cone
    sc = _scene([(0, 0, 4, 12, 14), (1, 1, 4, 12, 4), (2, 2, 4, 19, 8)])
    rec = W.gt_records(sc)
    assert W.left_of(rec, (0, 0)) == (1, 1)
    # spot above the blue triangle (box rows 19..22, cols 8..11): rows 13..18, cols 7..12
    assert W.spot_above(rec, (2, 2), 24, 24) == (13, 7, 18, 12)
    # the green disc (cols 4..7) overlaps col 7: not free, unless it is the picked object
    assert not W.spot_free(rec, (2, 2), None, 24, 24)
    assert W.spot_free(rec, (2, 2), (1, 1), 24, 24)


def test_invalid_calls_and_budget():
    g = W.Generator(np.random.default_rng(0))
    it = g.make("S1")
    w = W.ScenesWorld()
    tr = run_episode(w, it, lambda s, t: Call("spatial") if t.n_calls == 0 else
                     Call("answer", (9,)) if t.n_calls == 1 else w.oracle(it, s),
                     max_steps=10, budget=Budget(calls=10))
    assert tr.n_invalid == 2 and tr.success
    tr = run_episode(w, it, lambda s, t: w.oracle(it, s), max_steps=10, budget=Budget(calls=2))
    assert tr.stop == "budget" and not tr.success and tr.n_calls == 2


def _question_only_features(it) -> np.ndarray:
    """Per option, what a model that sees the question and the options but not the image can
    use: raw option values, ranks and spreads among the options, twins, names in the question."""
    rows = []
    geo = it.kind in ("point", "box")
    if geo:
        g = np.array([(o[0], o[1], o[0], o[1]) if it.kind == "point" else o for o in it.options],
                     float)
        c = np.stack([(g[:, 0] + g[:, 2]) / 2, (g[:, 1] + g[:, 3]) / 2], 1)
        d = np.hypot(*(c[:, None] - c[None]).transpose(2, 0, 1))
        size = np.stack([g[:, 2] - g[:, 0], g[:, 3] - g[:, 1]], 1)
        twin = np.array([[(size[i] == size[j]).all() and 0 < d[i, j] <= 4.3 for j in range(4)]
                         for i in range(4)]).any(1)
        rank = np.argsort(np.argsort(c, 0), 0)
        ax = np.zeros(4)
        if it.aux >= 0:
            axis, sign = ((1, 1), (1, -1), (0, 1), (0, -1))[it.aux]
            ax = np.argsort(np.argsort(sign * c[:, axis]))
    for k, o in enumerate(it.options):
        f = np.zeros(40)
        if geo:
            f[:4] = g[k] / 24
            f[4:6] = rank[k] / 3
            f[6] = d[k].sum() / 3 / 24
            f[7] = np.sort(d[k])[1] / 24
            f[8] = twin[k]
            f[9:13] = np.eye(4)[int(ax[k])]
            f[13:15] = size[k] / 6
        elif it.kind in ("obj", "objfree"):
            ob = o if it.kind == "obj" else o[0]
            f[16:20] = np.eye(4)[ob[0]]
            f[20:23] = np.eye(3)[ob[1]]
            f[23] = ob in it.targets[:1]
            f[24] = ob in it.targets[1:2]
            if it.kind == "objfree":
                f[25] = o[1]
                f[26] = sum(p[0] == ob for p in it.options) > 1
        else:
            f[28 + int(o)] = 1
        rows.append(f)
    return np.array(rows)


def test_options_do_not_give_the_answer_away():
    """A question-only rule (a logistic regression on what the question and options show:
    values, ranks, spreads, twins, names; and the most frequent answer position) fitted on a
    large generated set cannot beat chance (25%) by much on fresh items of any skill."""
    from sklearn.linear_model import LogisticRegression

    g = W.Generator(np.random.default_rng(11))
    accs = {}
    for skill in W.SKILLS:
        its = [g.make(skill) for _ in range(700)]
        tr, te = its[:450], its[450:]
        X = np.concatenate([_question_only_features(it) for it in tr])
        y = np.concatenate([np.eye(4)[it.key] for it in tr])
        clf = LogisticRegression(C=1.0, max_iter=500).fit(X, y)
        pick = [int(np.argmax(clf.decision_function(_question_only_features(it)))) for it in te]
        accs[skill] = float(np.mean([p == it.key for p, it in zip(pick, te, strict=True)]))
        pos = np.bincount([it.key for it in tr], minlength=4).argmax()
        assert np.mean([it.key == pos for it in te]) < 0.34, skill
    open_skills = ("P2", "B2")     # see test_option_features_do_not_give_the_answer_away
    assert max(v for k, v in accs.items() if k not in open_skills) < 0.36, accs
    assert max(accs[k] for k in open_skills) < 0.56, accs
    assert np.mean([v for k, v in accs.items() if k not in open_skills]) < 0.30, accs


def test_training_pool_without_sub_questions():
    """A training pool may skip the sub-questions (only the test diagnosis uses them); the
    generator then makes them again for later items."""
    g = W.Generator(np.random.default_rng(9))
    pool = g.mixed(("S1", "K2", "T1"), 6, subs=False)
    assert all(it.subs == [] for it in pool)
    it = g.make("S1")
    assert [s.skill for s in it.subs] == ["P1", "B1", "P1", "B1"]


def _option_features(it) -> np.ndarray:
    """The question-only features plus what a model that sees where the objects are (but not
    which is which, nor the skill's rule) can use per option: is the option on an object (in
    the last frame, in an earlier frame), the distance to the nearest object centre (last frame,
    earlier frames), the best IoU of a box with an object's box and an exact-box flag."""
    base = _question_only_features(it)
    extra = np.zeros((4, 8))
    if it.kind in ("point", "box"):
        sc, F = it.scene, it.scene.frames
        masks = [[sc.mask(k, f) for k in range(sc.n)] for f in range(F)]
        cents = np.array([[sc.centre(k, f) for k in range(sc.n)] for f in range(F)])
        for i, o in enumerate(it.options):
            g = (o[0], o[1], o[0], o[1]) if it.kind == "point" else o
            c = np.array([(g[0] + g[2]) / 2, (g[1] + g[3]) / 2])
            y, x = int(round(c[0])), int(round(c[1]))
            inside = 0 <= y < sc.height and 0 <= x < sc.width
            extra[i, 0] = inside and any(m[y, x] for m in masks[-1])
            extra[i, 1] = inside and any(m[y, x] for ms in masks[:-1] for m in ms)
            extra[i, 2] = np.hypot(*(cents[-1] - c).T).min() / 24
            # (the distance to the object's earlier centres is left out: the next position is the
            # one the motion leads away from them, i.e. the skill itself)
            if it.kind == "box":
                ious = [W.box_iou_mask(g, m) for m in masks[0]]
                extra[i, 4] = max(ious)
                extra[i, 5] = any(tuple(g) == sc.box(k) for k in range(sc.n))
            extra[i, 6] = c[0] / 24
            extra[i, 7] = c[1] / 24
    return np.concatenate([base, extra], 1)


def _leak_rates(features, seed: int, n: int = 700, n_train: int = 450) -> dict:
    from sklearn.linear_model import LogisticRegression

    g = W.Generator(np.random.default_rng(seed))
    g.with_subs = False
    accs = {}
    for skill in W.SKILLS:
        its = [g.make(skill) for _ in range(n)]
        tr, te = its[:n_train], its[n_train:]
        X = np.concatenate([features(it) for it in tr])
        y = np.concatenate([np.eye(4)[it.key] for it in tr])
        clf = LogisticRegression(C=1.0, max_iter=1000).fit(X, y)
        pick = [int(np.argmax(clf.decision_function(features(it)))) for it in te]
        accs[skill] = float(np.mean([p == it.key for p, it in zip(pick, te, strict=True)]))
    return accs


def test_option_features_do_not_give_the_answer_away():
    """Round 4: a logistic regression on the options' own image-side features (on an object or
    not, in the last or an earlier frame; distance to the nearest object; box overlap; position)
    plus the question-only features stays near chance on every skill: no wrong option can be
    rejected without the skill (P/B distractors lie on other objects; T2's never on a past
    position). The scripted oracle still solves every item (test above)."""
    accs = _leak_rates(_option_features, 12)
    # OPEN (round 4, measured, not hidden): P2/B2 ("the object nearest to A on its <side>",
    # every option on one object of a 4-object scene, A among them) keep a cue in the options'
    # geometry (the answer lies next to another option, A, on the named side): ~0.45-0.5 here
    # (round 3's extreme-object items: ~0.9 from "on an object" alone). Bounded, reported.
    open_skills = ("P2", "B2")
    assert max(v for k, v in accs.items() if k not in open_skills) < 0.37, accs
    assert max(accs[k] for k in open_skills) < 0.56, accs
    assert np.mean([v for k, v in accs.items() if k not in open_skills]) < 0.30, accs
