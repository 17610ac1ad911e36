// Qasper (AllenAI, qasper-{train,dev,test}-v0.3.json): the loader and references every Qasper task shares —
// `qasper` and `qasper-longbench` (tasks/qasper.cpp) and the counter-causal paper's `qasper-paper`
// (tasks/qasper_paper.cpp); they differ in split, context layout, reference strings, prompt and scoring.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "tasks/record_fields.h"
#include "tasks/task.h"

namespace kvbench::tasks {

struct QasperFormat {
  // One annotator's answer as {"answer": string, "type": "none" | "boolean" | "extractive" | "abstractive"}.
  json (*reference)(const json& annotation, const RecordFields& where);
  // The paper's title, abstract and sections as the prompt's context.
  std::string (*document)(const json& paper, const RecordFields& where);
  bool trim_question;  // the question as stored, or without surrounding whitespace
  bool file_order;     // papers in the file's order (the paper's code iterates the dict), else in id order
};

// Every question of a Qasper file (a dict arXiv id → paper), papers in id or file order (format.file_order),
// questions in file order.
// record {id (question_id), paper_id, question, references}; inputs {question, document}.
std::vector<Sample> load_qasper(const std::filesystem::path& path, const QasperFormat& format);

struct QasperReferences {
  std::vector<std::string> answers, types;
};
// The record's references; kvbench::Error naming the sample when there are none.
QasperReferences qasper_references(const Sample& sample);

}  // namespace kvbench::tasks
