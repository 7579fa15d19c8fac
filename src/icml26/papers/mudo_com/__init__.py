"""Multi-Domain Covariance Matching (MuDo-CoM) for dependent latent components. Metadata only."""

TITLE = "Multi-Domain Covariance Matching (MuDo-CoM) for dependent latent components"
TIER = "A"
ABSTRACT = "004_523bb06ad815be1c.txt, abstract 10"

SUMMARY = """\
Observations x = A s mix d latent components linearly, but the components are *dependent*
(correlated) and the data come from several domains that differ only by a diagonal rescaling
of the components: x_e = A Lambda_e s, with the law of s shared. The paper shows that if the
scalings vary enough across domains, A and the components are identifiable from the
per-domain covariances alone, C_e = A (Sigma o lam_e lam_e^T) A^T, even when s is Gaussian
(where ICA fails). The estimator, MuDo-CoM, fits all domain covariances jointly with a free
latent correlation Sigma; with Sigma = I it reduces to classical non-orthogonal joint
diagonalisation (JD). Here it is tested on exact simulations (d = 5 Gaussian, equicorrelated
sources with |corr| = rho, random A, scalings U(0.3, 2)) against least-squares JD (JD-LS),
two-domain GEVD, FastICA and the oracle, sweeping rho and the number of domains E.
"""

FIDELITY = """\
- **INFERRED: the estimator.** The paper's text is not available; "covariance matching" is read
  as the least-squares fit sum_e ||C_e - A (S o lam_e lam_e^T) A^T||_F^2 / ||C_e||_F^2 with
  S = L L^T free and lam_e = exp(ell_e), analytic gradients, Sigma_hat = corr(S). JD-LS is the
  same code with S = I (ACDC-style, Yeredor 2002). The paper may use a Gaussian likelihood or
  another criterion.
- **Optimiser (deviation).** The spec names L-BFGS-B (maxiter 3000). On this problem scipy
  1.17's L-BFGS-B costs ~3 ms per iteration and stalls at 3000 iterations (flat scale
  directions between A, S and lam), so we use dense BFGS from the same `minimize` call
  (gtol 1e-5, maxiter 3000): it reaches a lower loss in ~1000 iterations at ~0.5 ms each.
- **Restarts (budget).** Spec default: 6 restarts everywhere. To fit the 120 CPU-s budget the
  default scale keeps 6 restarts at E = 10 (where claims 1, 2 and 4 are checked) and uses 3 at
  E <= 5 (the spec allows 4 there). Restart 0: GEVD of domains (0, 1); restart 1..: a random
  pair; restart 2..: a random pair with A0 perturbed by 0.2 mean|A0| N(0,1). Restarts matter:
  with 3 restarts at rho = 0.7, E = 10 two of four seeds ended in local minima (Amari 0.27 and
  0.12); 6 restarts brought seed 0 to Amari 0.04. Fewer restarts at E = 3 could lower
  MuDo-CoM's MCC there and so favour claim 3 (E = 10 vs E = 3); note this when reading it.
  Full uses 8 restarts, as the spec.
- **FastICA sample (budget).** On Gaussian latents FastICA never converges and runs all 1000
  iterations, so it is fitted on the first 1000 standardised samples of each domain (pooled:
  1000 E samples) at default; the spec's "pooled data" is all n E samples (full scale uses all).
- **Metrics.** MCC on a fresh held-out draw of 1000 samples per domain (true s vs W_e x_e),
  averaged over domains; Amari distance of W_e A averaged over domains (only FastICA has a
  domain-dependent W_e = W_ica diag(1/sd_e)). Sigma error after Hungarian matching on |W A|
  and sign fix. MCC is inflated when sources are correlated, hence the Amari distance.
- **Not included.** The paper's fMRI validation (no data shipped); no real-data substitute.
  Identifiability conditions are probed only empirically (E and rho sweeps). Noise is
  isotropic and only in the full profile.
"""

METHODS = ("mudo-com", "jd-ls", "jd-gevd", "fastica", "oracle")
SETTINGS = None  # a setting gives rho and E (full also d, n, noise)
PROPOSED = "mudo-com"
BACKEND = "numpy"
