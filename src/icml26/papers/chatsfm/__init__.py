"""chatsfm: zero-shot channel adapter for frozen univariate TSFMs (metadata only)."""

TITLE = ("Zero-shot channel adapter for frozen univariate time-series foundation models "
         "(ChaTSFM, a.k.a. Chada)")
TIER = "B"
ABSTRACT = "004_523bb06ad815be1c.txt, abstract 6"

SUMMARY = """\
Time-series foundation models (TSFMs) forecast single series well zero-shot, but most are
trained channel by channel and ignore how the channels of a multivariate system depend on each
other. ChaTSFM (Chada on the ICML poster) is a small plug-in adapter for a frozen TSFM that
adds cross-channel information with no training on the target domain. It has three parts:
a budgeted pre-training collection that covers many kinds of inter-channel dependence; a
similarity between channels conditioned on data-derived domain descriptors (so that a raw
similarity score means the same across domains); and a gated refinement that adds information
from a sparse set of similar channels on top of the TSFM's own forecast, so that the forecast
is not damaged where neighbours do not help. The paper reports consistent zero-shot gains over
four TSFMs on nine benchmarks.

Here a small MLP forecaster, pre-trained once inside the pipeline on synthetic univariate
series and then frozen, stands in for the TSFM. The adapter is pre-trained on 48 synthetic
multivariate datasets with four dependency patterns (lead-lag, common factors, independent
channels, a shared seasonal pattern) and applied zero-shot to six held-out datasets, two of
them of unseen patterns (negative lead-lag, a mixture). It is compared with the TSFM alone,
with two ablations (no descriptors; dense mixing without the gate) and with a ridge VAR fitted
on each held-out dataset's own data as a reference.
"""

FIDELITY = """\
**No official code was consulted.** The repository named by the abstract
(Clearloveyuan/ChaTSFM) and the poster's anonymous repository are not in the search index;
only the abstract is known. Every formula, feature, size, loss, the budget rule, top-k and
the gate form below is the spec's reading and stays **INFERRED**.

- **Substituted: the TSFMs.** Chronos, TimesFM, Moirai and Timer are replaced by the shared
  `MLPForecaster` (instance-normalised lookback L = 96 -> 256 -> 256 -> H = 24, GELU),
  pre-trained in the train job on 30k synthetic univariate windows (sums of 1-3 sinusoids,
  stable AR(2), random walk, trend + seasonality, level shifts; Gaussian noise at SNR
  U(2, 20)) with Adam 1e-3, batch 256, 1500 steps and a fixed seed that `seed_offset` does not
  change (a "public checkpoint"). It is trained in the train job, not in prepare, so that only
  one job imports torch. The full profile adds the shared `PatchTransformer` as a second
  frozen backbone (setting `patch`) to mirror "four TSFMs". The families' amplitudes are
  INFERRED.
- **Substituted: the benchmarks.** The nine real datasets are replaced by synthetic
  multivariate series (T = 1200, each channel signal + AR(1) noise with coefficient 0.5):
  LEADLAG, FACTOR, INDEP, COMMONSEAS, and held out only ANTI (LEADLAG with w ~ U(-1.2, -0.6))
  and MIXED (5 LEADLAG / 3 FACTOR / 2 INDEP channels at C = 10). The noise level
  (var ratio U(0.2, 0.6), FACTOR U(0.5, 2) as in the spec), the sinusoid amplitudes U(1, 3),
  COMMONSEAS's shape (a period and its second harmonic, AR(1) innovations of s.d. 0.5) and
  MIXED's split of C = 10 are INFERRED. Each dataset is z-scored per channel with the
  statistics of its first 70% (descriptor + fit parts); test MSE / MAE are on that scale.
- **Budgeted collection (INFERRED budget rule).** 12 datasets of each of the four seen patterns,
  C ~ U{6, 8}, 250 windows per dataset at stride 4 starting after 168 points (so the three
  backtest windows behind each window exist). The paper's selection procedure is unknown.
- **Descriptor delta in R^7 (INFERRED list)** from each dataset's first 20% only: mean |corr|
  of levels, of differences and of TSFM backtest residuals (non-overlapping one-horizon
  backtests inside the 20%), mean over pairs of the max over lags 1-24 of |lagged corr| of
  differences, mean spectral entropy, mean seasonal strength, C / 20.
- **Pair features (INFERRED list)** from the current lookback: corr of levels, corr of
  differences, max over lags 1-24 of corr(dx_i(t), dx_j(t - lag)) and its argmax / 24, corr of
  the TSFM residuals over the last 3 backtest windows. The lagged feature is the **signed**
  maximum, as the spec writes it. A negative lead-lag (ANTI) has its strongest lagged
  correlation with a negative sign, which this feature does not see; the prep notes suggested
  the signed value at argmax |corr| instead, but only as a fix of a bug, and the spec's
  descriptor uses |.| explicitly while the pair feature does not, so we keep the spec's
  feature and report the consequence on ANTI in claim 1.
- **Adapter (INFERRED sizes, the spec's):** s_ij = MLP_s([f_ij, delta]) (32 hidden, GELU),
  top-3 neighbours with a softmax over them, E_n, E_s: Linear(72, 64) on [x[-48:], yhat],
  MLP_r 128 -> 64 -> 24, gate sigmoid(MLP_g([delta, max_j s_ij, mean top-k s_ij])) with output
  bias -2; MLP_g's hidden width (16) is not in the spec (INFERRED). Output
  yhat + g * r in the TSFM's instance-normalised space, then de-normalised. Loss: MSE on the
  normalised future; Adam 1e-3 (the written-out `icml26.rl.optim.Adam`), batch 32 windows,
  600 steps. TSFM forecasts are precomputed at every origin of a stride-4 grid; the TSFM gets
  no gradient.
- **Ablations.** CHADA-NODESC removes delta from MLP_s and MLP_g (its weights are zero, get no
  gradient, and the init bound uses the live inputs). DENSE-NOGATE keeps the conditioned
  similarity but mixes all channels with a softmax and adds r without a gate. All three
  adapters of a seed see the same minibatches and train as one stacked model (Adam is
  elementwise, so they stay independent).
- **LOCAL-VAR** (reference, not zero-shot): ridge (the shared `ridge_fit`, intercept
  unpenalised, as sklearn's Ridge) from all channels' last 48 values to each channel's next
  24, fitted on the dataset's own 50% fit part. alpha is chosen on the latest 20% of the fit
  windows (a rule fixed before any run), from the grid 0.1 ... 1000, extended by x10 at a
  chosen edge at most twice; the report's table gives the chosen values.
- **Scale.** Default runs the spec's sizes with 5 seeds (the spec's 3 raised to the
  checklist's minimum); the held-out set is one draw per type per seed (31 test windows x 10
  channels each). Smoke: 8 collection datasets, 100 adapter steps, TSFM 200 steps on 5k
  windows, 2 held-out datasets. Full: 200 collection datasets, 3 draws per held-out type,
  10 seeds, the second backbone. The spec's "C up to 64 (scalability)" is covered by the
  adapter's measured CPU time per 1000 channel-windows at C = 10 and C = 64 (reported, not
  claimed); no MSE is measured at C = 64.
- **Neighbour precision** is the fraction of the followers' top-3 neighbours (by s_ij) that
  are leaders; for DENSE-NOGATE its three largest s_ij.
"""

METHODS = ("tsfm", "chada", "chada-nodesc", "dense-nogate", "local-var")
SETTINGS = ("mlp", "patch")
PROPOSED = "chada"
BACKEND = "torch"
