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
- **Optimiser (deviation).** The spec names L-BFGS-B (maxiter 3000). On this problem scipy's
  L-BFGS-B is slow per iteration and stalls at the 3000-iteration cap (flat scale directions
  between A, S and lam), so we use dense BFGS from the same `minimize` call (gtol 1e-5,
  maxiter 3000), which reached a lower loss in fewer, cheaper iterations (side experiment, not
  in the pipeline: compare `mudocom.fit(C, rng, method="L-BFGS-B")` with the default
  `method="BFGS"` on the covariances of `experiment.truth_and_train(cfg, "rho0.7-E10", 0)`,
  timing each call).
- **Restarts.** 6 restarts for MuDo-CoM and JD-LS at every E and rho at default (the spec's
  default; full: 8, as the spec), so no setting is fitted with more effort than another and
  claim 3 (E = 10 against E = 3) compares equal effort. Restart 0: GEVD of domains (0, 1);
  restart 1..: a random pair; restart 2..: a random pair with A0 perturbed by
  0.2 mean|A0| N(0,1). The fit is non-convex: a seed whose fit loss is far above the others
  ended in a local minimum (the claim notes list the fit loss per seed).
- **Seeds.** 5 seeds at default (the spec's 0..3 is a minimum), 10 at full; "Amari lower in
  >= 3 of 4 seeds" is checked as a fraction of seeds >= 0.75.
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
