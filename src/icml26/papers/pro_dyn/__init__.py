"""pro-dyn: where the dynamics block sits decides forecasting quality (metadata only)."""

TITLE = "Time Series Forecasting Through the Lens of Dynamics (PRO-DYN nomenclature)"
TIER = "B"
ABSTRACT = "004_523bb06ad815be1c.txt, abstract 4"

SUMMARY = """\
In long-term time-series forecasting, Transformers are often matched or beaten by a single
linear layer. The paper's hypothesis is that a good forecaster must learn the dynamics, a
direct map from past points to future points. Its PRO-DYN nomenclature splits any forecaster
into processing blocks (PRO) and a dynamics block (DYN), a learnable map from the lookback to
the horizon. Two observations follow. Architectures that underperform learn the dynamics only
partially, e.g. through attention-based decoders without a complete past-to-future map. And
the DYN block must come last: adding a final linear DYN to Informer-like models improves them,
moving DYN to the front of PatchTST-like models degrades them, and a final DYN lets a model
benefit from a longer lookback.

Here five tiny forecasters, all with per-window instance normalisation, are trained the same
way on two synthetic 7-channel series (ETT-LIKE: daily and 96-step seasonality, trend, AR(1)
noise, level shifts; WEATHER-LIKE: a seasonally forced VAR(2)) at lookbacks 48 and 192 and
horizon 48: LINEAR (DYN only), INFORMER-LITE (PRO only: an encoder and a start-token decoder),
INFORMER-LITE+DYN (the same encoder, decoder replaced by a final Linear(L -> H)), PATCH-LITE
(PatchTST-style, whose flatten head is a final DYN) and PATCH-LITE-DYNFIRST (the DYN moved in
front of the patch encoder).
"""

FIDELITY = """\
No official code exists; the models and data are the spec's, read against Time-Series-Library's
Informer, PatchTST and DLinear (not copied).

- **Substituted data.** The LTSF benchmarks (ETTh/ETTm, Weather, Exchange, Traffic) are not
  shippable offline. Two synthetic series of 6000 steps and 7 channels stand in (smoke: 1500
  steps, ETT-LIKE only). ETT-LIKE follows the spec's recipe exactly; WEATHER-LIKE is the spec's
  VAR(2) (spectral radius 0.95, cross-lag density 0.3, innovation sd 0.5) with a shared forcing
  sin(2 pi t / 96) whose channel gains U(0.5, 1.5) are INFERRED. The full profile's
  EXCHANGE-LIKE (8 channels: a common and an own random walk per channel) and TRAFFIC-LIKE
  (21 channels: daily, half-daily and weekly cycles plus AR(1) noise) are INFERRED recipes.
  Each data set is drawn once from a fixed data seed and shared by all methods and seeds, as a
  benchmark is; seeds change initialisation and minibatches.
- **Splits and windows.** Chronological 70/10/20 split, standardisation with the training
  part's statistics, training windows with stride 1 inside the training part, validation and
  test windows with stride 8 whose forecast starts inside their part; their lookback may reach
  into the part before (Time-Series-Library's borders), so every L forecasts the same targets.
- **Models (tiny look-alikes).** Every model wraps per-window, per-channel instance
  normalisation (RevIN without affine, std + 1e-5). All encoders are the shared pre-norm
  transformer layer (d = 32, 2 heads, FFN 64, 2 layers, GELU, a final LayerNorm), its
  attention computed by torch's fused scaled-dot-product kernel. Informer's ProbSparse
  attention, distilling convolutions, calendar embeddings and dropout, and PatchTST's
  BatchNorm, end padding and dropout are not reproduced. The INFORMER-LITE decoder's positions
  continue the encoder's (INFERRED: Informer numbers decoder tokens from 0 and relies on
  calendar features these series lack). The decoder layer is pre-norm like the encoder
  (masked self-attention, cross-attention, FFN). PATCH-LITE is the shared PatchTransformer.
  PATCH-LITE-DYNFIRST's linear map and LINEAR's and INFORMER-LITE+DYN's DYN are shared by the
  channels ("per channel" read as channel-independent with shared weights, INFERRED).
- **Training.** Adam, lr 1e-3, gradient-norm clip 1.0, 150 steps on random training windows
  (with replacement), validation MSE every 25 steps, the best checkpoint tested; the same for
  every model. MSE loss on the standardised scale after undoing the instance normalisation.
  The runs of one model whose cells have equal shapes (its seeds, and at default both data
  sets at one lookback) train as one stacked computation; each run keeps its own
  initialisation, minibatches, gradient clip and best checkpoint, and ends where the same run
  trained alone would, up to float rounding (tested).
- **Scaled down at default: batch 5 instead of the spec's 32.** The attention over 192
  time-step tokens is compute-bound on one core, so stacking removes the per-run overhead but
  not the cost of the spec's batch: a default run at batch 32 cost several times the project's
  per-paper target (the measurements are in the config's comment; the INFORMER variants at
  L = 192 cost several times the spec's estimate). By a rule that reads CPU time only (the
  largest batch whose default run fits that target), every model trains on batches of 5 at
  default and smoke, with the spec's 150 steps, lr, clip and validation schedule; the full
  profile keeps 32. Measured effect of the cut (side runs outside the pipeline at batch 32,
  reproduced by deleting the default block's `params` line in config/papers/pro-dyn.yaml, on
  the spec seeds and on `seed_offset=1000`): at batch 32 INFORMER-LITE is markedly better on
  ETT-LIKE, so claim 1's ETT ratio is smaller (still far above its threshold) and claim 2's
  mean ratio is larger, near its 0.90 threshold (passing on the spec seeds, its interval
  straddling 0.90 on the fresh seeds) instead of comfortably below it. The small batch thus
  leaves the attention models more under-fitted, which favours claims 1 and 2 (the spec warns
  of this). Every verdict is the same at both batches on the spec seeds. On the fresh seeds
  claim 2 is inconclusive at both (at batch 32 through its mean ratio, at batch 5 through the
  fraction of cells), and claim 3 is not reproduced at batch 32 but inconclusive at batch 5
  (its interval touching 1.05); claims 1, 4, 5 and the premise check keep their verdicts.
- **Seeds.** 5 seeds at default (the spec lists 3), 10 at full.
- **Reference (not a method of the paper).** The closed-form least-squares optimum of LINEAR's
  own model class (one Linear(L -> H) on instance-normalised windows, ridge 1e-3) is computed
  per cell in prepare. It checks the spec's premise that the period-96 component needs the
  long lookback (sanity claim) and shows how far 150 Adam steps leave LINEAR from its optimum.
- **Not implemented.** The nomenclature's formal apparatus (Allen interval algebra) and the real
  models (Informer, FEDformer, MICN, FiLM, iTransformer, PatchTST, Crossformer); only the two
  empirical rules are tested. The synthetic series are nearly linear-Gaussian with seasonality,
  which favours linear dynamics: the claims are relative across architectures.
- **Full profile.** Length 20000, EXCHANGE-LIKE and TRAFFIC-LIKE added, L in {48, 96, 192, 336,
  720}, H in {48, 96, 192}, 2000 steps, batch 32, d = 64, 3 layers; 4 heads and FFN 128
  (INFERRED: the default's head width and FFN ratio). The claims read the spec's cells (ETT-LIKE
  and WEATHER-LIKE, L in {48, 192}, H = 48); the other cells are reported in the tables.
"""

METHODS = ("linear", "informer-lite", "informer-lite+dyn", "patch-lite", "patch-lite-dynfirst")
SETTINGS = None
PROPOSED = "informer-lite+dyn"
BACKEND = "torch"
