// Specs ("name:key=value,…", common/spec.h): typed knob reads with errors naming the knob, its type and
// range; the normal form (knobs away from their defaults, in reading order, canonical spelling) and the
// settings (every knob's value). The expected texts are written out here from the rules, not produced by
// the code under test.
#include <catch2/catch.hpp>

#include "common/error.h"
#include "common/spec.h"

using kvbench::parse_spec;

TEST_CASE("spec knobs are read as numbers, booleans and words, with errors naming knob, type and range", "[spec]") {
  const auto spec = parse_spec("x:n=3,f=0.25,b=1,w=each", "policy");
  CHECK(spec.name == "x");
  CHECK(spec.items.integer("n", 1, 0, 10) == 3);
  CHECK(spec.items.number("f", 0.5, 0, 1) == 0.25);
  CHECK(spec.items.boolean("b", false));
  CHECK(spec.items.choice("w", "last", {"last", "each"}) == "each");
  CHECK(spec.items.integer("absent", 7, 0, 10) == 7);
  CHECK_NOTHROW(spec.items.check_all_read());

  const auto bad = [](const std::string& text, auto read) {
    const auto parsed = parse_spec(text, "allocator");
    try {
      read(parsed.items);
    } catch (const kvbench::Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(bad("p:ratio=0.5", [](const auto& items) { items.number("ratio", 2, 1, 1e6); }) ==
        "allocator spec \"p:ratio=0.5\": ratio must be a number in 1..1e+06 (got \"0.5\")");
  CHECK(bad("p:ratio=2x", [](const auto& items) { items.number("ratio", 2, 1, 1e6); }) ==
        "allocator spec \"p:ratio=2x\": ratio must be a number in 1..1e+06 (got \"2x\")");
  CHECK(bad("p:ratio=inf", [](const auto& items) { items.number("ratio", 2, 1, 1e300); }).find("got \"inf\"") !=
        std::string::npos);
  CHECK(bad("p:n=1.5", [](const auto& items) { items.integer("n", 1, 0, 10); }) ==
        "allocator spec \"p:n=1.5\": n must be a whole number in 0..10 (got \"1.5\")");
  CHECK(bad("p:b=yes", [](const auto& items) { items.boolean("b", true); }) ==
        "allocator spec \"p:b=yes\": b must be a boolean (true, false, 1 or 0) (got \"yes\")");
  CHECK(bad("p:w=all", [](const auto& items) { items.choice("w", "last", {"last", "each"}); }) ==
        "allocator spec \"p:w=all\": w must be one of last, each (got \"all\")");
  CHECK(bad("p:ratoi=3", [](const auto& items) {
          items.number("ratio", 2, 1, 1e6);
          items.check_all_read();
        }) == "allocator spec \"p:ratoi=3\": unknown key \"ratoi\" (ratio)");
  CHECK_THROWS_WITH(parse_spec("p:ratio", "allocator"), Catch::Contains("\"ratio\" is not key=value"));
  CHECK_THROWS_WITH(parse_spec("p:a=1,a=2", "allocator"), Catch::Contains("a given twice"));
}

TEST_CASE("a spec's normal form leaves out knobs at their defaults and spells the rest canonically", "[spec]") {
  const auto normal = [](const std::string& text) {
    const auto spec = parse_spec(text, "policy");
    spec.items.integer("window", 64, 1, 4096);  // read in this order, whatever order the text gives
    spec.items.number("ratio", 2, 1, 100);
    spec.items.boolean("vnorm", true);
    spec.items.choice("layers", "last", {"last", "each"});
    return spec.items.normal_form(spec.name);
  };
  CHECK(normal("p") == "p");
  CHECK(normal("p:window=64,ratio=2.0,vnorm=1,layers=last") == "p");
  CHECK(normal("p:layers=each,window=32") == "p:window=32,layers=each");
  CHECK(normal("p:ratio=3.0") == "p:ratio=3");
  CHECK(normal("p:ratio=2.5,vnorm=0") == "p:ratio=2.5,vnorm=false");
  CHECK(normal("p:window=032") == "p:window=32");

  const auto spec = parse_spec("p:ratio=3", "allocator");
  spec.items.number("ratio", 2, 1, 100);
  spec.items.number("safeguard", 0, 0, 1);
  const auto settings = spec.items.settings();
  CHECK(settings.at("ratio") == 3.0);
  CHECK(settings.at("safeguard") == 0.0);
  CHECK(settings.size() == 2);
}
