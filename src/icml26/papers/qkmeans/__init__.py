"""Fast k-means seeding under the manifold hypothesis (Qkmeans). Metadata only."""

TITLE = "Fast k-means seeding under the manifold hypothesis (Qkmeans)"
TIER = "A"
ABSTRACT = "000_0e29b462e842f6da.txt, abstract 13"

SUMMARY = """\
Why is k-means++ seeding so much easier on real data than worst-case theory suggests? The
paper's answer is the manifold hypothesis. If the n points in R^D lie near a manifold of
intrinsic dimension d, quantization theory (Zador's asymptotics) says the optimal k-means cost
falls like OPT_k ~ C k^(-eps) with the quantization exponent eps = 2/d. The ratio
beta_k = n Var(X) / OPT_k therefore grows only like k^eps.

Qkmeans turns this regularity into speed. It draws each new centre by *rejection sampling*: a
proposal from a cheap distribution built once in O(nD) time (proportional to
||x - mu||^2 + D^2(mu, C)), accepted with probability D^2(x, C) / (2 (||x - mu||^2 + D^2(mu, C))).
The accepted point is distributed exactly as in k-means++ (D^2 sampling). The expected number of
proposals per centre is O(beta_k) = O(k^eps), so seeding k centres costs O~(k^(1+eps))
proposals instead of the n k distance evaluations of k-means++. An approximate nearest-centre
index with quality parameter rho < 1 then gives an O(rho^-2 log k)-approximate seeding in time
O(nD) + O~(rho^-1 k^(1+eps+rho)). The fast regime is large d (small eps). The empirical study
checks the predicted scaling laws (cost vs k, proposals vs k) and compares speed and quality
with k-means++, uniform seeding and the MCMC seeding AFK-MC^2.

Here the theory is tested on flat tori of known intrinsic dimension d = 2, 3, 4 embedded in
R^32 (n = 20000, k up to 256). Work is measured in machine-independent distance-equivalents.
The digits data set is included for reporting only.
"""

FIDELITY = """\
- **Source**: the paper's full text was not available; the method follows the abstract and the
  same authors' earlier rejection-sampling k-means++ (arXiv 2502.02085).
- **INFERRED: Qkmeans-exact.** The proposal q(i) ~ r2(x_i) + D2(mu, C) is a mixture of
  r2/S and the uniform distribution. The acceptance rule is a / (2 (r2 + dmu)), with proposals
  in vectorised batches of 256. Only the trials up to the first accepted one are counted.
  D2(mu, C) is kept up to date incrementally (one evaluation per new centre), since it only
  ever decreases.
- **INFERRED: Qkmeans-LSH(rho).** The paper's nearest-centre structure is replaced by
  p-stable Euclidean LSH (Datar et al. 2004) over the current centres: L = max(1, ceil(k^rho))
  tables of K_h = 3 hashes, bucket width w_j = 2 sqrt((S/n) j^(-eps_hat)), rebuilt when j
  doubles. A query with no bucket-mate falls back to ceil(k^rho) random centres. Acceptance is
  clipped at 1. eps_hat comes from a pilot: k-means++ on 1000 subsampled points for k = 8, 16,
  32 and a log-log slope, charged as 1000 x 56 evaluations. For the bucket width only, eps_hat
  is clipped to [0, 2]. L depends on the target k, so LSH seeds each k of the k-list
  separately, with one pilot per run. The hash tables are simulated by vectorised key
  comparison, and only what a real hash table would touch is counted (L K_h projections per
  query, one distance per bucket-mate).
- **Counting.** One distance-equivalent is one length-D inner product: a squared distance or a
  hash projection. k-means++ is charged n k, AFK-MC^2 n + m |C| per centre (m = 100), and
  uniform 0. Qkmeans is charged n for preprocessing, |C| per trial (exact), and 1 per centre
  for D2(mu, C). The final cost evaluation is never charged. Sequential samplers seed once to
  k_max, and prefix j is read as the seeding for k = j. This is distributionally identical,
  and the work is counted up to j.
- **Scaled down.** The paper's large cross-domain study is replaced by flat tori with d in
  {2, 3, 4}, n = 20000, D = 32, no noise and k <= 256, with 5 seeds (10 at full). Digits
  (n = 1797, D = 64, standardised, k <= 64) is reported only; it enters no claim. The full
  profile grows n to 2e5, D to 64, d to 8 and k to 2048, adds noise sigma = 0.01, rho in
  {0.25, 0.5, 0.75}, and uses the best (over seeds) cost of k-means++ + 5 Lloyd iterations as
  the OPT proxy.
- **Scaling-law proxy.** At smoke and default, the k-means++ seeding cost stands in for OPT_k,
  as the spec prescribes. Its ratio to OPT is roughly constant in k, so slopes are unaffected.
- **Not claimed.** Wall-clock speed-ups are not claimed and time_s is not recorded: wall times
  would make results non-deterministic, and Python overhead dominates at this size. The
  worst-case approximation factor O(rho^-2 log k) is not measured directly; the cost ratio to
  k-means++ stands in for it.
"""

METHODS = (
    "kmeans++",
    "uniform",
    "afkmc2",
    "qkmeans-exact",
    "qkmeans-lsh",
    "qkmeans-lsh-0.25",
    "qkmeans-lsh-0.75",
    "kmeans++lloyd",
)
SETTINGS = None  # any name: a setting gives d (and sigma, n, D, k) or dataset: digits
PROPOSED = ("qkmeans-exact", "qkmeans-lsh", "qkmeans-lsh-0.25", "qkmeans-lsh-0.75")
BACKEND = "numpy"
