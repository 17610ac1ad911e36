// Token-F1 graders for extractive/abstractive QA: Qasper (official Answer-F1), LongBench (qa_f1_score)
// and LoCoMo (stemmed F1 with per-category rules).
//
// All three references share SQuAD v1.1's answer normalisation, written in Python as
//   white_space_fix(remove_articles(remove_punc(lower(s)))).split()
// and reproduced here with Python's str semantics: Unicode lowercase, ASCII punctuation removed,
// articles removed only as whole words (re's Unicode \b), split on Python's whitespace set.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench::graders {

using Tokens = std::vector<std::string>;

// SQuAD normalisation with the given whole words removed (after lowercasing and punctuation removal).
Tokens normalized_tokens(std::string_view text, const std::vector<std::string_view>& removed_words);
// SQuAD v1.1 / Qasper / LongBench normalisation: removes "a", "an", "the".
Tokens squad_tokens(std::string_view text);

// Harmonic mean of precision and recall over the multiset intersection. 0 when nothing overlaps,
// including when either side is empty (SQuAD v1.1, Qasper, LongBench and LoCoMo all do this).
double token_f1(const Tokens& prediction, const Tokens& gold);

// token_f1 over squad_tokens: LongBench's qa_f1_score and the per-reference F1 of Qasper's evaluator.
// (token_f1 is also 2·common / (|p| + |g|), the form the counter-causal paper's code writes.)
double squad_f1(std::string_view prediction, std::string_view gold);

struct BestReference {
  double f1 = 0.0;
  std::size_t index = 0;  // the first reference reaching the maximum (the official evaluator's stable sort)
};
// max f1(prediction, reference) over references. Throws kvbench::Error when there are none.
BestReference best_reference(std::string_view prediction, const std::vector<std::string>& references,
                             double (*f1)(std::string_view prediction, std::string_view reference));
// Qasper Answer-F1 of one question (and LongBench's max over answers): max squad_f1 over references.
BestReference best_reference_f1(std::string_view prediction, const std::vector<std::string>& references);

// --- LoCoMo (snap-research/LoCoMo task_eval/evaluation.py) ---
// SQuAD normalisation that also removes "and", then NLTK's Porter stemmer (graders/porter.h), as
// evaluation.py stems.
Tokens locomo_tokens(std::string_view text);
// f1_score: token_f1 over locomo_tokens.
double locomo_f1(std::string_view prediction, std::string_view gold);
// Category 1 (multi-hop): split both sides on ','; mean over gold parts of the best F1 against any
// prediction part.
double locomo_multi_answer_f1(std::string_view prediction, std::string_view gold);
// Category 5 (adversarial): the prediction contains "no information available" or "not mentioned".
bool locomo_abstains(std::string_view prediction);
// The per-category rule: 1 multi-answer F1; 2, 4 F1; 3 F1 against the gold text before the first ';';
// 5 abstention (gold ignored). Throws kvbench::Error for any other category.
double locomo_score(int category, std::string_view prediction, std::string_view gold);

// --- The counter-causal paper's code (tasks.py; issue "Recipes true to the papers", item 9, issue 41) ---
// Its F1 differs from the official ones in two conventions kept here: an empty prediction against an empty
// gold scores 1.0 (not 0), and the dropped words are removed as whole whitespace tokens after punctuation
// removal (not at regex word boundaries: "“the" stays a token, as Python's str.split() leaves it).
// token_f1, except that two empty sides score 1.0 (_token_f1 and _locomo_token_f1).
double paper_token_f1(const Tokens& prediction, const Tokens& gold);
// _normalize_locomo: lowercase, ASCII punctuation removed, split on whitespace, the tokens a/an/the/and
// dropped, each token stemmed with NLTK's Porter stemmer.
Tokens locomo_paper_tokens(std::string_view text);
// _score_locomo: 1 the comma rule with blank parts dropped on both sides (a prediction with no non-blank
// part is one part, itself; no gold part scores 0); 2, 3, 4 F1 against the whole gold (no ';' cut for 3);
// 5 abstention. Throws kvbench::Error for any other category.
double locomo_paper_score(int category, std::string_view prediction, std::string_view gold);
// _normalize_qasper: lowercase, ASCII punctuation removed, split on whitespace; when the first token is
// "unanswerable", "yes" or "no" it is the only token, else the tokens "a", "an", "the" are dropped.
Tokens qasper_paper_tokens(std::string_view text);
// _token_f1 over _normalize_qasper.
double qasper_paper_f1(std::string_view prediction, std::string_view gold);

// Python's str.strip(): `text` without leading and trailing Unicode whitespace (the set str.split() uses).
std::string python_strip(std::string_view text);

}  // namespace kvbench::graders
