// RULER's QA tasks (scripts/data/synthetic/qa.py): qa_1 on SQuAD v2.0 dev (answerable questions), qa_2 on
// HotpotQA dev (distractor setting). Sample i asks question i; its own documents come first, then (SQuAD)
// the other paragraphs of its article, then random others, all shuffled, "Document k:" before each. The
// files are the user's (`kvbench datasets fetch squad` / `hotpotqa`, or squad=, hotpotqa= in the spec).
#include <algorithm>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "common/error.h"
#include "tasks/ruler/families.h"

namespace kvbench::tasks::ruler {

namespace {

const char* const kTemplate =
    "Answer the question based on the given documents. Only give me the answer and do not output any other "
    "words.\n\nThe following are given documents.\n\n{context}\n\nAnswer the question based on the given documents. "
    "Only give me the answer and do not output any other words.\n\nQuestion: {query}";
const char* const kAnswerPrefix = " Answer:";

struct Question {
  std::string query;
  std::vector<std::string> outputs;
  std::vector<int64_t> documents, more_documents;
};

struct Collection {
  std::vector<std::string> documents;  // sorted, distinct
  std::vector<Question> questions;
};

json read_json(const std::filesystem::path& file, const std::string& what) {
  std::ifstream in(file, std::ios::binary);
  if (!in) fail("{}: cannot read {} (kvbench datasets fetch, or name the file in the spec)", file.string(), what);
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    fail("{}: malformed JSON ({})", file.string(), e.what());
  }
}

// Indices of the sorted distinct `texts`.
std::map<std::string, int64_t> indexed(std::vector<std::string>& texts) {
  std::sort(texts.begin(), texts.end());
  texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
  std::map<std::string, int64_t> index;
  for (std::size_t i = 0; i < texts.size(); ++i) index.emplace(texts[i], i);
  return index;
}

Collection read_squad(const std::filesystem::path& file) {
  const json data = read_json(file, "SQuAD v2.0 dev");
  try {
    Collection c;
    for (const auto& article : data.at("data"))
      for (const auto& paragraph : article.at("paragraphs")) c.documents.push_back(paragraph.at("context"));
    const auto index = indexed(c.documents);
    for (const auto& article : data.at("data")) {
      std::vector<int64_t> article_documents;
      for (const auto& paragraph : article.at("paragraphs")) article_documents.push_back(index.at(paragraph.at("context")));
      for (const auto& paragraph : article.at("paragraphs")) {
        const int64_t own = index.at(paragraph.at("context"));
        for (const auto& qa : paragraph.at("qas")) {
          if (qa.value("is_impossible", false)) continue;
          Question q{qa.at("question"), {}, {own}, {}};
          for (const auto& answer : qa.at("answers")) q.outputs.push_back(answer.at("text"));
          for (const int64_t d : article_documents)
            if (d != own) q.more_documents.push_back(d);
          c.questions.push_back(std::move(q));
        }
      }
    }
    return c;
  } catch (const json::exception& e) {
    fail("{}: not SQuAD v2.0's layout (data[].paragraphs[].context, qas[]): {}", file.string(), e.what());
  }
}

Collection read_hotpotqa(const std::filesystem::path& file) {
  const json data = read_json(file, "HotpotQA dev (distractor)");
  try {
    const auto document = [](const json& entry) {
      std::string text = entry.at(0).get<std::string>() + "\n";
      for (const auto& sentence : entry.at(1)) text += sentence.get<std::string>();
      return text;
    };
    Collection c;
    for (const auto& item : data)
      for (const auto& entry : item.at("context")) c.documents.push_back(document(entry));
    const auto index = indexed(c.documents);
    for (const auto& item : data) {
      Question q{item.at("question"), {item.at("answer")}, {}, {}};
      for (const auto& entry : item.at("context")) q.documents.push_back(index.at(document(entry)));
      c.questions.push_back(std::move(q));
    }
    return c;
  } catch (const json::exception& e) {
    fail("{}: not HotpotQA's layout ([].question, answer, context[[title, sentences]]): {}", file.string(), e.what());
  }
}

class QuestionAnswering : public Family {
 public:
  explicit QuestionAnswering(Collection collection) : c_(std::move(collection)) {}

  Text make(int64_t size, int64_t index, SplitMix64& rng) const override {
    if (index >= static_cast<int64_t>(c_.questions.size()))
      fail("ruler qa: {} questions in the file, sample {} asks for more", c_.questions.size(), index);
    const Question& q = c_.questions[index];
    std::vector<int64_t> chosen = q.documents;
    const auto total = static_cast<int64_t>(c_.documents.size());
    if (size >= total) {  // every document, repeated as needed
      chosen.clear();
      for (int64_t i = 0; i < size; ++i) chosen.push_back(i % total);
    } else if (size - static_cast<int64_t>(q.documents.size()) > static_cast<int64_t>(q.more_documents.size())) {
      chosen.insert(chosen.end(), q.more_documents.begin(), q.more_documents.end());
      std::set<int64_t> used(chosen.begin(), chosen.end());
      std::vector<int64_t> others;
      for (int64_t d = 0; d < total; ++d)
        if (!used.count(d)) others.push_back(d);
      for (const int64_t i : sample_indices(rng, others.size(), size - static_cast<int64_t>(chosen.size())))
        chosen.push_back(others[i]);
    } else {
      for (const int64_t i : sample_indices(rng, q.more_documents.size(), size - static_cast<int64_t>(q.documents.size())))
        chosen.push_back(q.more_documents[i]);
    }
    rng.shuffle(chosen);
    std::string context;
    for (std::size_t i = 0; i < chosen.size(); ++i)
      context += fmt::format("{}Document {}:\n{}", i ? "\n\n" : "", i + 1, c_.documents[chosen[i]]);
    std::vector<std::string> own;
    for (const int64_t d : q.documents) own.push_back(c_.documents[d]);
    return {fmt::format(fmt::runtime(kTemplate), fmt::arg("context", context), fmt::arg("query", q.query)),
            kAnswerPrefix, q.outputs, own};
  }

  int64_t smallest_size() const override { return 10; }

 private:
  Collection c_;
};

}  // namespace

std::unique_ptr<Family> make_qa_family(const TaskConfig& config, const Spec& spec) {
  return std::make_unique<QuestionAnswering>(config.dataset == "squad" ? read_squad(spec.squad)
                                                                       : read_hotpotqa(spec.hotpotqa));
}

}  // namespace kvbench::tasks::ruler
