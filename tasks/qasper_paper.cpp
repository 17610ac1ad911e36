// Qasper as the counter-causal paper's code runs it (`qasper-paper`; issue "Recipes true to the papers",
// item 9), for its Figure 5: the dev split (qasper-dev-v0.3.json), every question of every paper.
// - prompt (raw): the paper's instruction, then "Title: ", "Abstract:", the sections, the question and
//   "Answer:"; each section is "<name>:\n" (no header when the name is empty) + its paragraphs joined by
//   "\n", sections joined by "\n\n" with a final "\n\n";
// - references, one per annotation: "unanswerable"; else "yes"/"no"; else the extractive spans joined by
//   a space; else the free-form answer; else "unanswerable";
// - score: max over references of graders::qasper_paper_f1 on the whole stripped generation;
// - papers in the file's order (tasks.py iterates the dict json.load made).
// Protocol::Reference differs only in system_text: QASPER_SYSTEM, with its "\n\n" (what --auto_frozen counts).
// The paper does not quote its max-token setting to us: 128 new tokens as `qasper`.
#include <fmt/format.h>

#include "tasks/graders/f1.h"
#include "tasks/qasper.h"
#include "tasks/task_support.h"

namespace kvbench::tasks {

namespace {

constexpr const char* kInstruction =
    "You are an expert researcher. Read the following scientific paper carefully. Answer the user's question based "
    "only on the provided text. Responses can be extractive, abstractive or yes/no.\n\n1. Identify the relevant "
    "paragraphs, tables, or figures (Evidence).\n2. Formulate an answer based on the evidence.\n3. If the answer "
    "cannot be found in the text, respond with \"Unanswerable\".";

// Python's separator.join(strings) over a JSON list of strings (empty strings still get their separator).
std::string joined(const json& strings, const char* separator, const char* what, const RecordFields& where) {
  std::string text;
  for (std::size_t i = 0; i < strings.size(); ++i)
    text += (i ? separator : "") + where.expect(strings[i], json::value_t::string, what).get<std::string>();
  return text;
}

json paper_reference(const json& annotation, const RecordFields& where) {
  const json& answer = where.object(annotation, "answer");
  if (where.boolean(answer, "unanswerable")) return {{"answer", "unanswerable"}, {"type", "none"}};
  const json& yes_no = where.field(answer, "yes_no");
  if (!yes_no.is_null())
    return {{"answer", where.expect(yes_no, json::value_t::boolean, "field \"yes_no\"").get<bool>() ? "yes" : "no"},
            {"type", "boolean"}};
  const json& spans = where.array(answer, "extractive_spans");  // a non-empty list, even of empty strings
  if (!spans.empty()) return {{"answer", joined(spans, " ", "an extractive span", where)}, {"type", "extractive"}};
  const std::string free_form = where.string(answer, "free_form_answer");
  if (!free_form.empty()) return {{"answer", free_form}, {"type", "abstractive"}};
  return {{"answer", "unanswerable"}, {"type", "none"}};
}

std::string section_text(const json& section, const RecordFields& where) {
  const std::string name = where.field(section, "section_name").is_null() ? "" : where.string(section, "section_name");
  return (name.empty() ? "" : name + ":\n") + joined(where.array(section, "paragraphs"), "\n", "a paragraph", where);
}

// Everything of the prompt between the instruction and "Question:".
std::string paper_document(const json& paper, const RecordFields& where) {
  std::string document = "Title: " + where.string(paper, "title") + "\n\nAbstract:\n" + where.string(paper, "abstract") + "\n\n";
  const json& sections = where.array(paper, "full_text");
  for (std::size_t s = 0; s < sections.size(); ++s)
    document += section_text(sections[s], where.nested(fmt::format("section {}", s))) + "\n\n";
  return document;
}

constexpr QasperFormat kPaperFormat{paper_reference, paper_document, /*trim_question=*/false, /*file_order=*/true};

class QasperPaper : public Task {
 public:
  explicit QasperPaper(Protocol protocol) : protocol_(protocol) {}
  std::string name() const override { return "qasper-paper"; }
  std::string default_dataset() const override { return "qasper/qasper-dev-v0.3.json"; }

  std::vector<Sample> load(const std::filesystem::path& path) const override { return load_qasper(path, kPaperFormat); }

  Prompt prompt(const Sample& sample) const override {
    Prompt prompt = instruction_prompt(kInstruction, input_string(sample, "document") + "Question: " +
                                                         input_string(sample, "question") + "\n\nAnswer:");
    if (protocol_ == Protocol::Reference) prompt.system_text = std::string(kInstruction) + "\n\n";  // QASPER_SYSTEM
    return prompt;
  }

  Grade grade(const Sample& sample, std::string_view output) const override {
    const auto [answers, types] = qasper_references(sample);
    Grade grade;
    const std::string prediction = trimmed(output);
    if (!prediction.empty()) grade.pred = prediction;
    const auto best = graders::best_reference(prediction, answers, graders::qasper_paper_f1);
    grade.score = best.f1;
    grade.details = {{"best_reference", best.index}, {"best_type", types[best.index]}};
    return grade;
  }

  DecodingDefaults defaults() const override { return {/*max_new_tokens=*/128}; }

 private:
  Protocol protocol_;
};

}  // namespace

std::unique_ptr<Task> make_qasper_paper_task(Protocol protocol) { return std::make_unique<QasperPaper>(protocol); }

}  // namespace kvbench::tasks
