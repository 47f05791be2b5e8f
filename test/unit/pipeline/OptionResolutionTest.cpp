//===- OptionResolutionTest.cpp - Precedence, option_json, presets --------===//

#include "mncc/pipeline/Options.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace mncc::pipeline;

namespace {

class OptionResolution : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("mncc-options", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string write(const std::string &name, const std::string &text) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    std::error_code error;
    llvm::raw_fd_ostream os(path, error);
    os << text;
    return path.str().str();
  }

  llvm::Expected<ResolvedOptions> resolve() {
    request.presetDir = MNCC_PRESET_DIR;
    return resolveCompileOptions(request);
  }

  std::string error() {
    auto resolved = resolve();
    if (resolved)
      return "(no error)";
    return llvm::toString(resolved.takeError());
  }

  llvm::SmallString<256> dir;
  OptionRequest request;
};

TEST_F(OptionResolution, NothingGivenIsTheDefaults) {
  auto resolved = resolve();
  ASSERT_TRUE(static_cast<bool>(resolved));
  EXPECT_EQ(resolved->options.name, "custom");
  EXPECT_EQ(writeOptionJson(resolved->options),
            writeOptionJson(CompileOptions()));
  for (OptionOrigin origin : resolved->options.origins)
    EXPECT_EQ(origin, OptionOrigin::Default);
}

TEST_F(OptionResolution, DirectValuesBeatOptionJsonArgs) {
  std::string file = write("o.json", R"({"args": ["--float_dtype=half",
      "--sram_budget=0.5"], "name": "mine"})");
  request.direct = {{"option_json", file}, {"float_dtype", "double"}};
  auto resolved = resolve();
  ASSERT_TRUE(static_cast<bool>(resolved))
      << llvm::toString(resolved.takeError());
  EXPECT_EQ(resolved->options.float_dtype, FloatDtype::Double);
  EXPECT_EQ(resolved->options.sram_budget, 0.5);
  EXPECT_EQ(resolved->options.name, "mine");
  EXPECT_EQ(resolved->options.origins[unsigned(OptionId::float_dtype)],
            OptionOrigin::Direct);
  EXPECT_EQ(resolved->options.origins[unsigned(OptionId::sram_budget)],
            OptionOrigin::OptionJson);
}

TEST_F(OptionResolution, LaterArgsWin) {
  std::string file = write(
      "o.json",
      R"({"args": ["--scheduler=spill_opt", "--scheduler=always_from_dram"]})");
  request.direct = {{"option_json", file}};
  auto resolved = resolve();
  ASSERT_TRUE(static_cast<bool>(resolved));
  EXPECT_EQ(resolved->options.scheduler, Scheduler::AlwaysFromDram);
}

TEST_F(OptionResolution, ASetVariableBeatsOptionJsonEnvs) {
  std::string file = write("o.json", R"({"envs": {"CODEGEN_SA_STEPS": 5,
      "CODEGEN_USE_MERGE": true, "CODEGEN_NUM_SA_THREADS": "3"}})");
  request.direct = {{"option_json", file}};
  request.environment = {{"CODEGEN_SA_STEPS", "7"}};
  auto resolved = resolve();
  ASSERT_TRUE(static_cast<bool>(resolved));
  EXPECT_EQ(resolved->options.CODEGEN_SA_STEPS, 7);
  EXPECT_TRUE(resolved->options.CODEGEN_USE_MERGE);
  EXPECT_EQ(resolved->options.CODEGEN_NUM_SA_THREADS, 3);
  ASSERT_EQ(resolved->notes.size(), 1u);
  EXPECT_EQ(resolved->notes[0],
            "CODEGEN_SA_STEPS=5 from " + file +
                " ignored: the environment sets CODEGEN_SA_STEPS=7");
}

TEST_F(OptionResolution, OptionJsonNumbersKeepTheirValue) {
  std::string file = write(
      "o.json", R"({"envs": {"CODEGEN_SA_STEPS": 18446744073709551615}})");
  request.direct = {{"option_json", file}};
  EXPECT_EQ(error(),
            "CODEGEN_SA_STEPS=18446744073709551615 (from option_json " + file +
                "): expected an integer");
  file = write("o.json", R"({"envs": {"CODEGEN_MAX_TIME_SLICE": -3}})");
  EXPECT_EQ(error(), "CODEGEN_MAX_TIME_SLICE=-3 (from option_json " + file +
                         "): must be at least 1");
  file = write("o.json", R"({"envs": {"CODEGEN_MAX_TIME_SLICE": 1.5}})");
  EXPECT_EQ(error(), "CODEGEN_MAX_TIME_SLICE=1.5 (from option_json " + file +
                         "): expected an integer");
  // An integral float is that integer.
  file = write("o.json", R"({"envs": {"CODEGEN_MAX_TIME_SLICE": 1e3}})");
  auto resolved = resolve();
  ASSERT_TRUE(static_cast<bool>(resolved));
  EXPECT_EQ(resolved->options.CODEGEN_MAX_TIME_SLICE, 1000);
}

TEST_F(OptionResolution, OptionJsonDoesNotNest) {
  std::string inner =
      write("inner.json", R"({"args": ["--float_dtype=half"]})");
  std::string outer =
      write("outer.json", "{\"args\": [\"--option_json=" + inner +
                              "\", \"--sram_budget=0.5\"]}");
  request.direct = {{"option_json", outer}};
  auto resolved = resolve();
  ASSERT_TRUE(static_cast<bool>(resolved));
  EXPECT_EQ(resolved->options.float_dtype, FloatDtype::Mixed);
  EXPECT_EQ(resolved->options.sram_budget, 0.5);
  ASSERT_EQ(resolved->notes.size(), 1u);
  EXPECT_EQ(resolved->notes[0], "ignored --option_json=" + inner + " in " +
                                    outer +
                                    "'s args: option_json does not nest");
}

TEST_F(OptionResolution, EveryPresetLoads) {
  std::vector<std::string> presets = listPresets(MNCC_PRESET_DIR);
  EXPECT_EQ(presets,
            (std::vector<std::string>{"O0", "O1", "O2", "O3", "O4", "debug"}));
  for (const std::string &preset : presets) {
    SCOPED_TRACE(preset);
    request.direct = {{"option_json", preset}};
    auto resolved = resolve();
    ASSERT_TRUE(static_cast<bool>(resolved))
        << llvm::toString(resolved.takeError());
    EXPECT_EQ(resolved->options.name, preset);
    EXPECT_TRUE(resolved->notes.empty());
  }
}

TEST_F(OptionResolution, PresetsSetWhatTheDocumentSays) {
  auto load = [&](const char *preset) {
    request.direct = {{"option_json", preset}};
    auto resolved = resolve();
    EXPECT_TRUE(static_cast<bool>(resolved));
    return resolved ? resolved->options : CompileOptions();
  };
  CompileOptions o1 = load("O1"), o2 = load("O2"), o3 = load("O3"),
                 o4 = load("O4"), debug = load("debug");
  // O1 and up anneal; O1 the least.
  for (const CompileOptions *options : {&o1, &o2, &o3, &o4})
    EXPECT_EQ(options->scheduler, Scheduler::AutoRecomputeSa);
  EXPECT_LT(o1.CODEGEN_SA_STEPS, o2.CODEGEN_SA_STEPS);
  // O3 widens the search and adds L1Merge; O4 widens it further.
  EXPECT_LT(o2.CODEGEN_SA_STEPS, o3.CODEGEN_SA_STEPS);
  EXPECT_LT(o3.CODEGEN_SA_STEPS, o4.CODEGEN_SA_STEPS);
  EXPECT_LT(o3.CODEGEN_SCHEDULE_PP_BEAM_WIDTH,
            o4.CODEGEN_SCHEDULE_PP_BEAM_WIDTH);
  EXPECT_FALSE(o2.CODEGEN_USE_MERGE);
  EXPECT_TRUE(o3.CODEGEN_USE_MERGE);
  EXPECT_TRUE(o4.CODEGEN_USE_MERGE);
  // debug: the simple scheduler, no complex optimization.
  EXPECT_EQ(debug.scheduler, Scheduler::AlwaysFromDram);
  EXPECT_FALSE(debug.CODEGEN_USE_MERGE);
}

TEST_F(OptionResolution, TheWrittenOptionJsonReproducesTheOptions) {
  request.direct = {{"option_json", "O3"}, {"float_dtype", "float"}};
  request.environment = {{"CODEGEN_OPS_ON_HOST", "Exp,Log"},
                         {"CODEGEN_OP_DEF", "Gather=GatherReduce"}};
  auto first = resolve();
  ASSERT_TRUE(static_cast<bool>(first));
  std::string text = writeOptionJson(first->options);
  std::string file = write("option.json", text);
  request = OptionRequest();
  request.direct = {{"option_json", file}};
  auto second = resolve();
  ASSERT_TRUE(static_cast<bool>(second)) << llvm::toString(second.takeError());
  EXPECT_EQ(writeOptionJson(second->options), text);
  EXPECT_EQ(second->options.name, "O3");
  EXPECT_EQ(second->options.CODEGEN_OPS_ON_HOST, (StringList{"Exp", "Log"}));
  // Table order, four spaces, a final newline.
  EXPECT_EQ(
      text.substr(0, 61),
      "{\n    \"envs\": {\n        \"CODEGEN_FIND_BEST_COMPILE_OPTIONS\": ");
  EXPECT_EQ(text.back(), '\n');
  EXPECT_NE(text.find("        \"--float_dtype=float\",\n        "
                      "\"--layout_planner=lpz\""),
            std::string::npos);
  EXPECT_EQ(text.find("--option_json"), std::string::npos);
}

TEST_F(OptionResolution, UnknownNamesSayWhereTheyCameFrom) {
  request.direct = {{"float_dtyp", "half"}};
  EXPECT_EQ(error(), "unknown option 'float_dtyp' (from the command line); "
                     "did you mean 'float_dtype'?");
  request.direct = {{"CODEGEN_USE_MERGE", "1"}};
  EXPECT_EQ(error(),
            "'CODEGEN_USE_MERGE' is an environment variable, not a "
            "command-line option (from the command line): set it in the "
            "environment or in option_json's \"envs\"");
  request.direct.clear();
  request.environment = {{"CODEGEN_NOPE", "1"}};
  EXPECT_EQ(error(), "unknown variable 'CODEGEN_NOPE' (from the environment)");
  // Other MLSDK components' variables are left alone, and logged.
  request.environment = {{"MNCORE_DEVICE", "0"}};
  auto resolved = resolve();
  ASSERT_TRUE(static_cast<bool>(resolved));
  EXPECT_EQ(resolved->notes, (std::vector<std::string>{
                                 "ignored MNCORE_DEVICE from the environment: "
                                 "not a compile option"}));

  std::string file = write("o.json", R"({"envs": {"PFVM_NOPE": "1"}})");
  request.environment.clear();
  request.direct = {{"option_json", file}};
  EXPECT_EQ(error(),
            "unknown variable 'PFVM_NOPE' (from option_json " + file + ")");
  file = write("o.json", R"({"envs": {"float_dtype": "half"}})");
  EXPECT_EQ(error(), "'float_dtype' is a command-line option, not an "
                     "environment variable (from option_json " +
                         file + "): put it in \"args\" as --float_dtype=VALUE");
  file = write("o.json", R"({"args": ["--nope=1"]})");
  EXPECT_EQ(error(), "unknown option 'nope' (from option_json " + file + ")");
}

TEST_F(OptionResolution, BadValuesSayWhereTheyCameFrom) {
  request.direct = {{"sram_budget", "1.5"}};
  EXPECT_EQ(error(),
            "sram_budget=1.5 (from the command line): must be between 0 and 1");
  request.direct.clear();
  request.environment = {{"CODEGEN_SA_STEPS", "many"}};
  EXPECT_EQ(
      error(),
      "CODEGEN_SA_STEPS=many (from the environment): expected an integer");
  request.environment.clear();
  std::string file = write("o.json", R"({"args": ["--float_dtype=quad"]})");
  request.direct = {{"option_json", file}};
  EXPECT_EQ(error(), "float_dtype=quad (from option_json " + file +
                         "): expected one of mixed, half, float, double");
  request.directOrigin = "compile()'s options";
  request.direct = {{"layout_planner", "z"}};
  EXPECT_EQ(error(), "layout_planner=z (from compile()'s options): expected "
                     "one of lpz, bidi, legacy");
}

TEST_F(OptionResolution, MalformedOptionJsonGivesFileLineAndColumn) {
  std::string file = write(
      "bad.json", "{\n  \"envs\": {\n    \"CODEGEN_USE_MERGE\": 1,\n  }\n}\n");
  request.direct = {{"option_json", file}};
  EXPECT_EQ(error(), file + ":4:3: option_json (from the command line) is not "
                            "valid JSON: syntax error while parsing object "
                            "key - unexpected '}'; expected string literal");
  file = write("bad.json", "{\"args\": [\"--float_dtype=half\"] x}");
  EXPECT_EQ(error(), file + ":1:33: option_json (from the command line) is "
                            "not valid JSON: syntax error while parsing "
                            "object - invalid literal; last read: "
                            "'\"--float_dtype=half\"] x'; expected '}'");
  file = write("bad.json", "[1, 2]");
  EXPECT_EQ(error(), "option_json " + file +
                         " (from the command line): expected a JSON object "
                         "with \"envs\", \"args\" and \"name\"");
  file = write("bad.json", R"({"args": "--float_dtype=half"})");
  EXPECT_EQ(error(),
            "option_json " + file + ": \"args\" must be an array of strings");
  file = write("bad.json", R"({"args": ["float_dtype=half"]})");
  EXPECT_EQ(error(), "option_json " + file +
                         ": args[0]: expected \"--name=value\", got "
                         "\"float_dtype=half\"");
  file = write("bad.json", R"({"envs": {"CODEGEN_USE_MERGE": [1]}})");
  EXPECT_EQ(error(), "option_json " + file +
                         ": envs.CODEGEN_USE_MERGE must be a string, a number "
                         "or a boolean");
  file = write("bad.json", R"({"flags": []})");
  EXPECT_EQ(error(), "option_json " + file +
                         " (from the command line): unknown key 'flags' "
                         "(expected \"envs\", \"args\" and \"name\")");
  file = write("bad.json", R"({"name": 3})");
  EXPECT_EQ(error(), "option_json " + file + ": \"name\" must be a string");
}

TEST_F(OptionResolution, MissingFilesAndPresets) {
  request.direct = {{"option_json", "/no/such/options.json"}};
  EXPECT_EQ(error(), "option_json /no/such/options.json (from the command "
                     "line): cannot read it: No such file or directory");
  request.direct = {{"option_json", "O9"}};
  EXPECT_EQ(error(), "unknown preset 'O9' for option_json (from the command "
                     "line); the presets are O0, O1, O2, O3, O4, debug");
}

TEST(Presets, LiveBesideTheTools) {
  EXPECT_EQ(presetDirectoryFor("/opt/mncc/bin/mncc"),
            "/opt/mncc/share/mncc/preset_options");
}

} // namespace
