// Qasper (AllenAI, qasper-{train,dev,test}-v0.3.json) on the test split, and a LongBench-style subset of it.
// The counter-causal paper's protocol (dev split) is `qasper-paper` (tasks/qasper_paper.cpp).
//
// `qasper`: one sample per question; the references are all annotators' answers, stringified as the
// official qasper_evaluator.py does; score = SQuAD-normalised token F1, max over references (the
// reference implementation's F1 and, per question, Qasper's official Answer-F1; both are in details,
// with the type of the best-matching reference, so reports can break Answer-F1 down by type).
//
// `qasper-longbench`: LongBench's 200-question file exists only on the HF hub, so an equivalent subset
// is built from the official file: each question's single reference is its FIRST annotation's answer
// (LongBench's qasper records hold one answer), and the questions are the 200 with the smallest
// question_id in byte order. question_ids are 40-hex-digit digests, so this is a pseudo-random sample
// that needs no seed and is reproducible in one line of Python:
//   sorted(q["question_id"] for p in data.values() for q in p["qas"])[:200]
// Samples come in that order. Prompt: LongBench's config/dataset2prompt.json "qasper" template
// verbatim; graded with qa_f1_score (max over answers, here one); 128 new tokens (dataset2maxlen.json).
#include "tasks/qasper.h"

#include <algorithm>
#include <set>

#include "common/error.h"
#include "common/json_file.h"
#include "tasks/graders/f1.h"
#include "tasks/task_support.h"

namespace kvbench::tasks {

namespace {

// LongBench's qasper instruction (the reference's raw prompts follow its wording).
constexpr const char* kInstruction =
    "You are given a scientific article and a question. Answer the question as concisely as you can, using a "
    "single phrase or sentence if possible. If the question cannot be answered based on the information in the "
    "article, write \"unanswerable\". If the question is a yes/no question, answer \"yes\", \"no\", or "
    "\"unanswerable\". Do not provide any explanation.";
// LongBench repeats the instruction after the article; the leading space is in their template.
constexpr const char* kLongBenchReminder =
    " Answer the question based on the above article as concisely as you can, using a single phrase or sentence "
    "if possible. If the question cannot be answered based on the information in the article, write "
    "\"unanswerable\". If the question is a yes/no question, answer \"yes\", \"no\", or \"unanswerable\". Do not "
    "provide any explanation.";
constexpr std::size_t kLongBenchQuestions = 200;

// One annotator's answer as the official evaluator turns it into a string, with the evaluator's type
// names ("none" = unanswerable).
json reference_of(const json& annotation, const RecordFields& where) {
  const json& answer = where.object(annotation, "answer");
  if (where.boolean(answer, "unanswerable")) return {{"answer", "Unanswerable"}, {"type", "none"}};
  const json& spans = where.array(answer, "extractive_spans");
  if (!spans.empty()) {
    std::string joined;
    for (const auto& span : spans) {
      joined += (joined.empty() ? "" : ", ") + where.expect(span, json::value_t::string, "an extractive span").get<std::string>();
    }
    return {{"answer", joined}, {"type", "extractive"}};
  }
  const std::string free_form = where.string(answer, "free_form_answer");
  if (!free_form.empty()) return {{"answer", free_form}, {"type", "abstractive"}};
  const json& yes_no = where.field(answer, "yes_no");
  if (yes_no.is_null()) where.fail("the answer is not unanswerable and has no span, free-form answer or yes_no");
  return {{"answer", where.expect(yes_no, json::value_t::boolean, "field \"yes_no\"").get<bool>() ? "Yes" : "No"},
          {"type", "boolean"}};
}

// Title, abstract, then each section as "name:\n" and its paragraphs, blocks separated by blank lines.
std::string document_of(const json& paper, const RecordFields& where) {
  std::string document = where.string(paper, "title") + "\n\nAbstract:\n" + where.string(paper, "abstract");
  const json& sections = where.array(paper, "full_text");
  for (std::size_t s = 0; s < sections.size(); ++s) {
    const RecordFields section_where = where.nested(fmt::format("section {}", s));
    const json& name = section_where.field(sections[s], "section_name");
    // One test paper has a null name (its untitled opening section): its paragraphs go in unheaded.
    std::string block = name.is_null() ? "" : section_where.string(sections[s], "section_name") + ":";
    for (const auto& paragraph : section_where.array(sections[s], "paragraphs")) {
      const std::string text = section_where.expect(paragraph, json::value_t::string, "a paragraph").get<std::string>();
      if (!trimmed(text).empty()) block += (block.empty() ? "" : "\n") + text;
    }
    document += "\n\n" + block;
  }
  return document;
}

Sample question_sample(const std::string& paper_id, const json& qa, const std::string& document,
                       const QasperFormat& format, const RecordFields& where) {
  const json& annotations = where.array(qa, "answers");
  if (annotations.empty()) where.fail("field \"answers\" is empty");
  json references = json::array();
  for (std::size_t a = 0; a < annotations.size(); ++a) {
    references.push_back(format.reference(annotations[a], where.nested(fmt::format("answer {}", a))));
  }
  Sample sample;
  sample.id = where.string(qa, "question_id");
  const std::string stored = where.string(qa, "question");
  const std::string question = format.trim_question ? trimmed(stored) : stored;
  sample.record = {{"id", sample.id}, {"paper_id", paper_id}, {"question", question}, {"references", references}};
  sample.inputs = {{"question", question}, {"document", document}};
  return sample;
}

std::vector<Sample> longbench_subset(std::vector<Sample> samples) {
  std::sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.id < b.id; });
  if (samples.size() > kLongBenchQuestions) samples.resize(kLongBenchQuestions);
  for (auto& sample : samples) {
    json& references = sample.record["references"];
    references = json::array({references.front()});
  }
  return samples;
}

// The official evaluator's references over LongBench-style documents.
constexpr QasperFormat kOfficialFormat{reference_of, document_of, /*trim_question=*/true, /*file_order=*/false};

}  // namespace

std::vector<Sample> load_qasper(const std::filesystem::path& path, const QasperFormat& format) {
  const nlohmann::ordered_json in_file_order = read_ordered_json_file(path);
  if (!in_file_order.is_object()) fail("{}: expected an object mapping paper ids to papers", path.string());
  std::vector<std::pair<std::string, json>> papers;
  for (const auto& [paper_id, paper] : in_file_order.items()) papers.emplace_back(paper_id, paper);
  if (!format.file_order) std::sort(papers.begin(), papers.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Sample> samples;
  std::set<std::string> ids;
  for (const auto& [paper_id, paper] : papers) {
    const RecordFields paper_where(path, "paper " + paper_id);
    const std::string document = format.document(paper, paper_where);
    const json& questions = paper_where.array(paper, "qas");
    for (std::size_t q = 0; q < questions.size(); ++q) {
      const RecordFields where = paper_where.nested(fmt::format("question {}", q));
      samples.push_back(question_sample(paper_id, questions[q], document, format, where));
      require_new_id(ids, samples.back().id, fmt::format("{}: paper {}, question {}", path.string(), paper_id, q));
    }
  }
  return samples;
}

QasperReferences qasper_references(const Sample& sample) {
  const RecordFields where(fmt::format("sample {}", sample.id), "record");
  QasperReferences references;
  for (const auto& reference : where.array(sample.record, "references")) {
    references.answers.push_back(where.string(reference, "answer"));
    references.types.push_back(where.string(reference, "type"));
  }
  if (references.answers.empty()) where.fail("field \"references\" is empty");
  return references;
}

namespace {

class Qasper : public Task {
 public:
  explicit Qasper(bool longbench) : longbench_(longbench) {}

  std::string name() const override { return longbench_ ? "qasper-longbench" : "qasper"; }
  std::string default_dataset() const override { return "qasper/qasper-test-v0.3.json"; }

  std::vector<Sample> load(const std::filesystem::path& path) const override {
    auto samples = load_qasper(path, kOfficialFormat);
    return longbench_ ? longbench_subset(std::move(samples)) : samples;
  }

  Prompt prompt(const Sample& sample) const override {
    const std::string article = "Article: " + input_string(sample, "document");
    const std::string question = "Question: " + input_string(sample, "question");
    return instruction_prompt(kInstruction, article,
                              longbench_ ? "\n\n" + std::string(kLongBenchReminder) + "\n\n" + question
                                         : "\n\n" + question,
                              "Answer:");
  }

  Grade grade(const Sample& sample, std::string_view output) const override {
    const auto [answers, types] = qasper_references(sample);
    Grade grade;
    const std::string prediction = trimmed(output);
    if (!prediction.empty()) grade.pred = prediction;
    const auto best = graders::best_reference_f1(prediction, answers);
    grade.score = best.f1;
    grade.details = {{"answer_f1", best.f1}, {"best_reference", best.index}, {"best_type", types[best.index]}};
    return grade;
  }

  DecodingDefaults defaults() const override { return {/*max_new_tokens=*/128}; }

 private:
  bool longbench_;
};

}  // namespace

std::unique_ptr<Task> make_qasper_task() { return std::make_unique<Qasper>(false); }
std::unique_ptr<Task> make_qasper_longbench_task() { return std::make_unique<Qasper>(true); }

}  // namespace kvbench::tasks
