"""Learning junta distributions and quantum junta states. Metadata only."""

TITLE = "Learning junta distributions and quantum junta states"
TIER = "A"
ABSTRACT = "000_0e29b462e842f6da.txt, abstract 15"

SUMMARY = """\
A distribution on {-1,1}^n is a k-junta if its mass function depends on only k of the n bits.
The paper (Bao & Escudero Gutierrez, arXiv 2410.15822) shows that such distributions can be
learned to total-variation error eps from O(2^k log(n) / eps^2) samples. This is a quadratic
improvement over Aliakbarpour, Blais and Rubinfeld (COLT'16) and matches their lower bound in
every parameter. The key tool is Fourier analysis: the Fourier mass of the right k-subset
is what singles it out.

The quantum analogue is a k-junta state: a k-qubit state tensored with the maximally mixed
state on the other n - k qubits. Such states are learned to trace distance eps from
O(12^k log(n) / eps^2) single-copy random Pauli measurements (classical shadows, analysed
through the Pauli spectrum), with an Omega((4^k + log n) / eps^2) lower bound. Testing
junta-ness needs Theta~(2^n / eps^2) copies for constant k. Shallow QAC^0 circuits with few
ancillas have Choi states close to juntas and are therefore learnable.

Here the sample-complexity scaling is measured on random junta instances: m*(eps) against n
(Sweep A, k = 2, n = 8..64), k (Sweep B, n = 12, k = 1..3) and eps (Sweep C). The learner is
compared with an oracle that knows the support and with a max-TV plug-in selection rule. The
quantum part simulates random Pauli measurements exactly on n <= 6 qubits (k <= 2).
"""

FIDELITY = """\
- **INFERRED: the classical learner.** The spec reconstructs it as Fourier-mass selection. It
  estimates every Fourier coefficient of degree <= k, scores each k-subset J' by
  M(J') = sum of c_hat(T)^2 over the nonempty T in J' (= 2^k ||p_hat_J' - u||_2^2 by Parseval),
  takes J* = argmax, and outputs the empirical marginal on J* times uniform. The paper's exact
  algorithm may differ in constants or add a thresholding step. Selection is brute force over
  all k-subsets (n^k time).
- **INFERRED: the quantum learner.** It combines classical shadows (one random X/Y/Z basis per
  qubit and copy) with Pauli-mass selection over k-subsets. It rebuilds
  rho_hat = 2^-k sum_P est(P) P on J* and projects it onto density matrices (eigenvalues onto
  the simplex).
- **Baselines.** The oracle knows J and outputs the empirical marginal on J (classical), or the
  same shadow tomography on J (quantum). Max-TV selection is a plug-in alternative, not the
  ABR'16 algorithm; it runs only at n = 16, k = 2.
- **Learning curves.** Each replicate draws one fresh instance and max(m) samples. Grid point m
  uses the first m samples, so each replicate's error curve is one learning curve, with errors
  correlated along m within a replicate. Every method sees the same instances and samples.
- **Errors are exact.** TV is summed over the 2^|J u J*| assignments and trace distance is
  computed on the qubits J u J*; the other coordinates cancel.
- **Scaled down.** Default runs 5 seeds x 15 replicates (pooled 75) with n <= 64 and k <= 3
  (classical) and n <= 6, k <= 2 (quantum). The full profile goes to n = 256 (k = 2), k = 5
  (n = 16, with marginal counts instead of dense Fourier tensors), about 200 replicates, and
  quantum n = 8, k = 3. Constants are not compared with the theorems. Only rates are checked:
  not the 12^k constant nor the 4^k lower bound.
- **Not implemented.** The full profile's junta-testing experiment (2^n / eps^2 copies) was
  not built in this version. The QAC^0 learning result and the address-function lower bound
  are not tested.
"""

METHODS = ("learner", "oracle", "maxtv")
SETTINGS = None  # any name: a setting gives kind (classical | quantum), n, k (and sweep)
PROPOSED = "learner"
BACKEND = "numpy"
