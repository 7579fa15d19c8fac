"""bear: skill-level diagnosis of embodied MLLMs and a tool-augmented agent (metadata only)."""

TITLE = "Skill-level diagnosis of embodied MLLMs and a tool-augmented agent (BEAR, BEAR-Agent)"
TIER = "C"
ABSTRACT = "000_0e29b462e842f6da.txt, abstract 10"

SUMMARY = """\
BEAR splits embodied tasks into atomic skills in six categories, from low-level perception
(pointing, bounding boxes) through trajectory and spatial reasoning to task planning and
long-horizon episodes, and evaluates multimodal LLMs skill by skill. A hierarchical diagnosis
finds that perception failures are the main cause of reasoning failures and that models handle
space and time unstably. BEAR-Agent gives an MLLM visual and spatial tools and improves it
broadly (GPT-5: +17.5% relative on BEAR).

Nothing of the real benchmark, models or robots is reproducible offline, so this is
"Mini-BEAR": procedurally generated 4-option items over 24x24 scenes and 4-frame clips with
12 skills in the six categories, a zoo of tiny vision-question scorers trained in the pipeline
(the "MLLMs"), the hierarchical diagnosis (conditional accuracy given the perception
sub-questions, an oracle-perception probe, answer flips under a 1-px translation), a
question-prior baseline, and Mini-BEAR-Agent: the same frozen image encoder plus the outputs of
a classical visual tool (colour threshold, connected components, shape from fill ratio) and a
spatial tool (velocities, extrapolated positions, pairwise relations), called through the
shared agent loop with a turn budget. What is tested is the diagnostic logic and the direction
of the tool gain, not any magnitude about real MLLMs.
"""

FIDELITY = """\
Official code read: yqi19/BEAR-official, BEAR-Agent/ (main.py, config.py, prompt.py, tools.py,
build_prompt_new.py, running_evaluate_agent_batch.py, running_agent_baseline_batch_image.py,
convert_bear_data.py; commits 97ca328 / 0689b44 of the stored snapshot). Facts carried over,
no code copied.

- **Everything is a proxy.** Procedurally generated 24x24 scenes and 4-frame clips
  (`icml26.agents.worlds.scenes`, a shared world with a scripted oracle that solves every item
  from the tools' outputs alone) instead of BEAR's 4,469 real image/video items; tiny CNN
  scorers trained here instead of 20 MLLMs; classical CV tools instead of GroundingDINO /
  SAM / Depth-Anything; no simulator or robot. Claims 1-3 partly follow from construction (the
  tools are exact on these scenes); they check that the diagnosis and the agent pipeline behave
  as the paper's logic predicts, not the real magnitudes. The agent's tool outputs are the
  detected objects (as the oracle list) plus the spatial tool's velocities and next two
  positions; pairwise relations are computed by the scorer's relational grounding.
- **Skills.** 12 skills in BEAR's six categories (BEAR: 14 subsets in 5 folders; long-horizon
  has no folder officially, our L1/L2 are composed items as the spec asks). The spec's "free
  space" pointing (P2) and colour counting (B2) are not BEAR skills: they are **replaced** by
  BEAR's spatial-relationship pointing / box ("the object nearest to A on its left / right /
  upper / lower side"; round 3's "leftmost / ... object" was dropped in round 4, see below).
  K1 ("to place A next to B, which object must be moved first?": A itself when free, else
  the object on top of it, i.e. the nearest object above A within 3 px of its column) and K2
  (task progress, as BEAR's task-progress reasoning: "sorting left to right by colour order
  red, green, blue, yellow (ties square, disc, triangle), how many objects are already in
  their final slot?", options 0-3) are our fixed rules.
- **Options that do not give the answer away (second round; a generator fix).** The first
  version's options carried answer cues (K1 always offered exactly the two named objects, L2
  offered the picked object only as an unnamed pair, T2's distractors had a fixed geometry
  around the answer, B1 paired the answer with its own near miss, P2/B2's answer was the most
  extreme option), so a question-only model beat 35%. Distractors are now drawn from the
  answer's own distribution: T2, the next position under other velocities; P1/B1, other
  objects' points / boxes (boxes each with a near-miss twin, like the answer); P2/B2, points /
  boxes on the same-named extreme object of independent scenes; K1/K2 answer roles and counts
  balanced; L2's other object never a named one. A test fits a question-only logistic
  regression (option values, ranks, spreads, twins, names) on a large generated set and checks
  it stays near chance on fresh items of every skill.
- **Round 4 (generator defects fixed; benchmark validity, not tuning).** (1) Round 3's P/B
  distractors mostly lay on the background, so "is there an object under the candidate?"
  solved P2/B2 and half of P1/B1 without the skill. P/B items are now drawn on 4-object scenes
  with one option on each object (a point on it / its box); sub-questions on 2-3-object scenes
  use the other objects first and the older distractors only for the remaining slots. With
  every option on an object, an extreme-object question is answered by the options'
  coordinates alone, so P2/B2 now ask for the object nearest to a named object A on a named
  side (A among the options; the answer's rank along that axis among the options drawn
  uniformly). OPEN: P2/B2 keep a measured cue in the options' geometry (the answer lies next
  to another option on the named side): a logistic regression on the options gets ~0.45-0.5
  (test-bounded < 0.56; round 3 ~0.9 from the background cue). (2) T2's distractors are never
  at a position the object held in a shown frame and lie on the object's earlier-frame mask
  exactly when the answer does (round 3's reversed velocity landed on the previous frame).
  (3) L2's "spot free" was balanced by a fresh coin per rejection try, which kept the natural
  ~70% free rate in the answers (a question-only cue: pick a "free" option); the target is now
  drawn once per item. (4) A second test fits a logistic regression on the options' image-side
  features (on an object in the last / an earlier frame, distance to the nearest object, box
  overlap, position) plus the question-only ones: near chance on every skill but P2/B2 (above).
- **Pointing and boxes keep the spec's 4-candidate form** (a deviation: officially a free
  (x, y) and a free box) **but are scored the official way**: a chosen point scores 1 when it
  lies in the target's mask, a chosen box scores its IoU with the target's mask (so a right
  box of a disc or triangle scores its fill ratio). Every failure (no answer) scores 0, also
  for boxes (officially failed box items are dropped from the mean IoU; not copied). Overall
  = macro mean over the 12 per-skill scores. Claim 5 uses accuracy (answer key) over all 12
  skills, all of which are 4-option items; chance is computed from the options and reported.
- **Mini-BEAR-Agent (INFERRED simplification of the multi-turn agent).** Officially GPT-5 runs
  a Visual-Sketchpad loop of up to 10 turns (config.py MAX_REPLY) with tools described per task
  type; the planning prompt (path planning, next action, task progress) gives no tools. Here a
  scripted controller makes one round of tool calls (visual, then spatial) and answers; every
  call goes through `icml26.agents.run_batch` with a budget of `max_turns` = 10 calls (the
  answer is a call too). Official mode (method `agent`): task-planning items get no tools (zero
  tool features). Ablation `agent-all`: tools for every skill, so that claim 3 is not true by
  construction; claim 3 is checked on both.
- **Grounded scorer (ours: a departure from the spec's concatenation scorer).** The spec's
  MLP([image; question; option]) must learn to match raw option coordinates against image
  content from ~170 items per skill; in the first round even the perfect-perception scorer
  did not learn pointing, so the diagnosis was empty. An MLLM points and grounds natively, so
  every variant with a context now grounds each option in it, the same way (fixed before any
  claim metric was seen): with an image, a candidate point / box reads the conv feature maps
  at its location (first map pooled inside the box and on its 1-px ring, second map sampled at
  its centre) and named objects (options, question targets, a skill query) are found by
  attention over the second conv map's cells (soft position + pooled features); with an
  object list (oracle perception, the agent's tools), candidate points / boxes are compared
  with every object (option minus each object's boxes and centres, through a small MLP,
  pooled by the question's attention) and named objects are found by attention over the
  objects; relational features (option minus question-entity positions) follow. The encoder
  (convolutions, 128-d embedding), option and question encoders and the 128-unit scorer are
  the spec's. The question prior has no context and keeps the spec's scorer.
- **Names looked up by identity in an object list (issue 18; fixed on a validation seed
  before any claim was read).** With the learned name-to-object attention, even the
  perfect-perception scorer memorised its training items without generalising (validation
  loss rising from the first epoch). An object list names every object (colour, shape), so
  in the object-list pathway (oracle perception and the agent's tool outputs alike) a named
  object (an option's or the question's) is now found by identity match, with a "found"
  flag per object option (a name absent from the scene); the skill query (e.g. "the moving
  object") stays a learned attention, its keys also seeing each object's displacement from
  the first to the last frame. The image pathway (plain) keeps the learned attention: finding
  a named object in pixels is the perception the zoo model must learn.
- **Training length (ours).** Every model (all variants, zoo models, seeds) trains with Adam
  (spec lr, batch) until its validation loss stops improving: each seed keeps its
  lowest-validation-loss parameters; training stops when no seed improved for `patience`
  epochs or at the `epochs` cap (the spec's fixed 10 epochs were too few for the first round's
  models). Round 4's patience of 2 (cap 12) stopped every group at epoch 3-5 with every model
  on its epoch-1 parameters, so every variant scored at chance; issue 18 fixed the rule in the
  config (patience 4, cap 30) on validation data before reading any claim. A model whose
  validation loss does not improve after its first epochs keeps those parameters: it has not
  learned (the report's best-epoch and per-skill validation curves show which). The
  report's curves show the validation loss and accuracy and the chosen epoch.
- **The agent's reasoner (ours).** The official backbone is frozen and uses tools in context;
  here the plain zoo model's trained image encoder is frozen and a fresh scorer is trained on
  the spec's [image embedding; tool-output embedding] with the same items, training rule,
  batch and learning rate as the plain model (a stand-in for in-context tool use). Since
  issue 18 the agent reads the frozen encoder's 128-d embedding only (the spec's input; round
  4 also re-grounded the options in the frozen conv maps, which roughly doubled the agent's
  training CPU), so the agent's tool-less task-planning items (official mode) see the image
  embedding and the question alone.
- **Diagnosis (ours, not in the official code).** Conditional accuracy, the oracle-perception
  probe and the 1-px flip rate are the spec's design. Sub-questions are a P1 and a B1 item on
  frame 0 for each object a reasoning item names or needs (T: the moving object; S2, L1: also
  the answer object; K2: the answer object; L2: A, B and the picked object). The translation
  rolls every frame, noise included, by 1 px in a random axis direction (objects keep 1 px
  from the border), and the candidate points and boxes move with it.
- **Scaled down (a CPU rule, stated in the config).** Default: zoo models Z1 (w = 8) and Z2
  (w = 16) with **480 training items each (spec 2,000)**, an epoch cap of 30 with early
  stopping (patience 4), **50 test items per skill (spec 250)**, 240 validation items (spec
  600), 5 seeds (spec 2). The training size is the largest multiple of 120 whose CPU, predicted
  from the measured per-item cost of the engineered train job, fits the project's 90 CPU-s
  target for this paper; it was chosen by CPU alone, never by a test-set or claim metric, and
  is the same for every zoo model and variant. Fewer training items make every learned
  variant weaker; the report's per-skill validation / test table shows how far each is from
  chance. **Z3 (w = 16, 6,000 items) runs at full scale only.** Full restores 2,000-30,000
  items, 250 test items per skill, 600 validation items and a cap of 40 epochs; the spec's
  48x48 scenes with occlusion, 8 frames and the two extra skills (depth order,
  count-in-video) are **not implemented** (full runs the 24x24 world with 6 zoo models up to
  w = 64, 10 seeds). Smoke: Z1 only, 300 training items, 2 epochs, 1 seed.
- **Engineering that changes no result.** Every item of a seed is rendered once; the visual
  and spatial tools run once per item on those frames (memoised for the agent loop and the
  scripted oracle); the frozen encoder's maps are computed once per item and shared by plain
  scoring, the sub-questions and both agent variants; models of the same shape train as one
  stacked computation (the seeds of a variant; agent with agent-all), each (zoo model,
  variant) group with its own early stopping (a stopped group leaves the stack); training and
  validation items carry no perception sub-questions (only the test diagnosis uses them).
- **Oracle and question prior shared across zoo models (issue 18, for CPU).** Neither reads
  the zoo model's image encoder, so zoo models with the same number of training items share
  one trained oracle and one trained prior per seed (trained from the first zoo model's run
  streams); their rows in the metrics are the same model's.
- **Other choices.** Shapes: square (fill 1), disc (0.75-0.89) and a right triangle
  (0.58-0.63) so that fill ratio separates them at 4-6 px; the visual tool assigns each pixel
  to the nearest palette colour or the background (a threshold halfway between them). Items of
  a seed are shared by every zoo model and variant of that seed (paired comparisons).
  Validation: 240 items per seed (spec 600), scaled down for CPU.
"""

METHODS = ("plain", "agent", "agent-all", "oracle", "prior")
SETTINGS = None
PROPOSED = ("agent", "agent-all")
BACKEND = "torch"
