"""multihal: KG-grounded multilingual multi-hop hallucination benchmark (metadata only)."""

TITLE = ("MultiHal: Multilingual Dataset for Knowledge-Graph Grounded Evaluation of LLM "
         "Hallucinations")
TIER = "C"
ABSTRACT = "000_0e29b462e842f6da.txt, abstract 18"
SUMMARY = """\
Hallucination benchmarks are mostly English and ground answers in text passages. MultiHal links
questions from existing factuality QA sets to Wikidata: entity linking, SPARQL mining of paths
of up to two hops from the question entity to the answer (about 140k paths), and an LLM judge
that rates each path and keeps 25.9k high-quality ones, translated into several European
languages. As a baseline the authors compare vanilla QA with KG-RAG (the KG path placed in the
prompt) for several LLMs and languages. KG-RAG raises semantic similarity by about 0.12-0.36,
NLI entailment by 0.16-0.36 and a hallucination detector's consistency score by 0.29-0.42.

Here a synthetic knowledge graph (persons, cities, countries, organisations; five relations)
and tiny causal transformers trained inside the pipeline stand in for Wikidata and the LLMs.
Half the persons have their facts in the training text, the others only appear through KG
paths. Three synthetic languages have their own relation and question words and word order.
Paths are mined as MultiHal mines them (question entity to answer, shortest hop count first)
and pruned by a rule-based judge. Each model answers every test question without a path, with
the curated path, with every mined path (the unfiltered pool), and with the spec's random path
from the question entity. Symbolic stand-ins score the answers for semantic similarity,
entailment and consistency.
"""
FIDELITY = """\
- **Everything is synthetic (spec).** No Wikidata, no real questions, no LLM judge, no NLLB
  translation, no real LLMs. The KG (fixed per seed), the three languages, the training text
  and the test questions are generated from the seed (`benchmark.py`); the data card table
  lists their sizes and what is built in. Absolute numbers depend on the seen/unseen mix and
  are not comparable with the paper's.
- **What follows from how the data were built, and what does not.** Unseen persons never
  occur in the text, so vanilla QA can only guess their answers (claim 2 and most of claim 1's
  gain follow from this split by construction). Every mined path ends at the answer, so a model
  that learned to copy the path's last entity scores well on any mined path (claim 3, see the
  tail-copy rows of the data card). What the runs measure is whether the tiny models learn to
  read the paths in every language and model size, how much they recall parametrically for
  seen persons (held-out types), and whether composing two stored facts is harder than
  recalling one (claim 4).
- **Unfiltered paths follow the official code, not the spec (notes from ernlavr/multihal).**
  The SPARQL query pins the last object of a path to the answer (src/kgs/querybuilder.py) and
  mining tries 1 hop, then 2, and stops at the first hop count that returns paths
  (src/kgs/kg_manager.py). `kg-rag-unfiltered` therefore uses every question-to-answer path of
  the shortest hop count, including coincidental ones (e.g. birth city = employer's city).
  Paths that start and end at the same entity are dropped. When a coincidental 1-hop path
  exists for a 2-hop question, mining stops there and the question has no curated path; it is
  then dropped from vanilla and curated rows, as in the official evaluation. The spec's reading
  (a path drawn uniformly from all paths of the question's hop count that start at the
  question entity) is kept as the labelled variant `kg-rag-spec-random`. Claim 3 reads the
  official pool; the claim's note gives the gap to the spec's variant.
- **Judge (INFERRED rule).** The paper rates each path 1-5 with an LLM that sees the gold
  answer and keeps ratings >= 4 (KnowledgeInjection.py); it first keeps the intersection of two
  top-10 picks on shuffled lists. Our judge rates a path 5 when its relation chain is the
  question's chain and 2 otherwise, and we keep >= 4 (`judge_keep`). With at most a few mined
  paths per question the top-10 step keeps everything, and there is no property blacklist
  (every relation is meaningful).
- **Rows and decoding (official code).** One row per (question, path); vanilla QA is scored
  on the curated rows without the path. The official code samples answers at T = 1; the
  scores reported and checked are the exact expectation under T = 1 sampling of the single
  answer token (sum over the vocabulary of p(v) times the score of v), so no sampling noise is
  added. The spec's greedy decoding is reported too (`*_greedy` metrics, claim 1 note).
- **Metrics are symbolic stand-ins (spec).** Semantic similarity: cosine of L2-normalised
  [one-hot type, one-hot entity, 0.5 x bag of KG neighbours] (a non-entity token scores 0).
  Entailment: (question entity, chain, answer) holds in the KG. Consistency: the answer has the
  expected type and lies within 2 undirected hops of the question entity (INFERRED:
  undirected). The official code computes only the MiniLM embedding cosine; it has no NLI or
  HHEM code, so the entailment and consistency stand-ins have no counterpart there.
- **Languages.** Each language has its own relation tokens, question words and word order per
  template; entity names are shared. NLLB in the official pipeline translates the whole path
  string, names included; we keep names shared (spec) so that the entity-level scores stay
  defined across languages.
- **Design details (INFERRED).** Spouses are paired within the seen persons and within the
  unseen persons. One third of all (seen person, question type) pairs is held out of QA
  training; the held-out types of 20 seen persons are tested. Training samples sequences
  uniformly from the corpus (facts, vanilla QA for seen persons, KG-RAG QA with gold paths for
  seen and KG-train persons), loss on every token of a fact and on answer + <eos> of QA.
  Models: the shared pre-LN GPT (`icml26.lm.model`, tied embeddings, learned positions,
  context 24, 4 heads, MLP 4x, no dropout); AdamW (betas 0.9/0.95, INFERRED; weight decay 0.01
  on matrices), lr 3e-3, no warm-up, cosine decay to 0, per-model gradient clip 1.0
  (INFERRED). The five seeds of a size train stacked (batched over the seed axis); a unit
  test checks that this equals separate trainings.
- **Scaled down for the CPU budget (default).** 5 seeds (spec: 3) and batch 16 instead of 64,
  with the spec's 2000 steps for both model sizes. A second-round cut to 1500 steps, chosen
  by CPU alone, was reverted by the lead because a side run showed that it broke a premise
  the paper rests on (not every seen person's fact was stored any more); the decision looked
  at the premise measure (`fact_recall`), which is not a claim metric. The premise is measured
  in every run (`fact_recall`: greedy completion of every fact sentence of the training text;
  claim 2's note). Smoke: 30 persons, 1 language, the tiny model, 200 steps, 1 seed (spec).
- **Why curated KG-RAG scores lower on 1-hop than on 2-hop questions (second round; not a
  code bug).** The per-type table (`entailment_by_type`) and claim 1's note locate the gap in
  the answer tokens. Names are single tokens and the embeddings are tied, so a model copies
  the path's tail well only if that token was often a training target (an output of facts
  and QA), and every softmax of training pushes the logits of rarely or never produced tokens
  down. 2-hop answers are countries and head-office cities, frequent targets; 1-hop answers
  include organisations and persons, rarer targets, and (a) the spouses of unseen persons,
  never targets: an unseen person's spouse is another unseen person (the INFERRED
  within-group pairing; pairing across groups would put unseen persons into the seen
  persons' fact sentences, against the spec), and a person is an output only as somebody's
  spouse. The table and claim 1's note give KG-RAG entailment by how often the gold answer is
  a training target, 1-hop and 2-hop apart: within a frequency bin the gap mostly closes. A
  real LLM copies a rare name from subword tokens it has produced often; this is a property
  of the miniature's single-token answers. (b) For seen persons, spouse_of is stored in both
  directions; given the path `p spouse_of s` the models often answer with the question's own
  person p (the stored spouse of s): the table gives the probability of that answer. Prompt
  construction, the answer position read, the scores and the training coverage of 1-hop KG
  prompts were checked (tests: loss positions, hand-scored rows, per-type metrics of a model
  that answers with the question's entity). Nothing was changed in the benchmark: the gap is
  reported, and claims 1 and 2 include these rows as before.
- **Training cost, engineering (second round).** The training forward is the shared GPT's
  function written with batched matmuls over the seed axis (no vmap); the last layer, the
  final LayerNorm and the vocabulary head run only at the loss positions (at most 3 of the 12
  per sequence); parameters sit in two flat tensors, so clipping and AdamW are a few
  operations per step. Tests check equal logits and loss against the shared GPT and equal
  parameters against separate trainings. Evaluation is one forward per prompt and condition
  (no generation: single-token answers).
- **Full scale (INFERRED details).** 400 persons, a sixth relation (`studied_at`), 3-hop
  question types, 5 languages, 3 paraphrased templates per (type, language), a third model
  size (4 layers, d = 128), 8000 steps at the spec's batch 64, 10 seeds. Not run here.
"""
METHODS = ("vanilla", "kg-rag", "kg-rag-unfiltered", "kg-rag-spec-random", "oracle")
SETTINGS = None
PROPOSED = "kg-rag"
BACKEND = "torch"
