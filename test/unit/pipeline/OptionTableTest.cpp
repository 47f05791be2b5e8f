//===- OptionTableTest.cpp - The table of compile options -----------------===//
//
// Every option and variable of the MLSDK compile-option document (4.2.2 and
// 4.2.3) is in the table, with a type, a default, a description, the
// component that reads it and its status; a missing one fails here.
//
//===----------------------------------------------------------------------===//

#include "mncc/pipeline/Options.h"

#include "gtest/gtest.h"

#include <set>

using namespace mncc::pipeline;

namespace {

// 4.2.2: the command-line options.
const char *const kDocumentOptions[] = {
    "option_json",     "float_dtype",     "layout_planner",        "scheduler",
    "simulation_mode", "sram_budget",     "sa_expected_run_iters", "out_onnx",
    "layout_spec",     "gemm_layout_spec"};

// 4.2.3: the environment variables.
const char *const kDocumentVariables[] = {
    "CODEGEN_FIND_BEST_COMPILE_OPTIONS",
    "CODEGEN_FIND_BETTER_COMPILE_OPTIONS",
    "CODEGEN_SCHEDULE_PP_BEAM_MAX_TURN",
    "CODEGEN_SCHEDULE_PP_BEAM_TURN_PRUNE_LIMIT",
    "CODEGEN_SCHEDULE_PP_BEAM_WIDTH",
    "CODEGEN_USE_MERGE",
    "CODEGEN_USE_PARALLEL_MERGE",
    "CODEGEN_SA_STEPS",
    "CODEGEN_NUM_SA_THREADS",
    "CODEGEN_N_TRANSPOSE_THREADS",
    "CODEGEN_N_DEV_COPY_STREAMS_THREADS",
    "CODEGEN_ENABLE_SET_PARTIAL_LOCATION",
    "CODEGEN_GEMM_FORCE_CHANNEL_SPLIT",
    "CODEGEN_OP_DEF",
    "CODEGEN_SKIP_RESOLVE_NEGATIVE_INDICES",
    "CODEGEN_TIME_SLICE_SCATTERED_INDEXING_BCAST",
    "CODEGEN_MAX_TIME_SLICE",
    "CODEGEN_IGNORE_LAYOUT_CHECK",
    "CODEGEN_ALLOW_UNUSED_LAYOUT_SPEC",
    "CODEGEN_USE_ADDR_FIRST_Z",
    "CODEGEN_LAYOUT_PLANNER_Z",
    "CODEGEN_ALARM",
    "CODEGEN_IGNORE_REUSED_VALUE_LAYOUT",
    "CODEGEN_DEFER_SIMPLIFY",
    "CODEGEN_NODE_SIM_ALLOW_UNEXPECTED_FAIL",
    "CODEGEN_FORCE_ATTENTION_GRAD_AFTER_FORWARD",
    "CODEGEN_AUTO_RECOMPUTE_HACK_FOR_QWEN",
    "CODEGEN_STOP_USING_GENERIC_INDEXING_GATHER_INDEX_ADD",
    "CODEGEN_GEMM_FORCE_WEIGHT_ON_DRAM",
    "CODEGEN_LPZ_SKIP_PROPAGATE_TIME",
    "CODEGEN_OPS_ON_HOST",
    "CODEGEN_CONV_AGGRESSIVE_TIME_SLICING",
    "CODEGEN_GN_AGGRESSIVE_TIME_SLICING",
    "CODEGEN_SKIP_OPTIMIZER_FUSION",
    "CODEGEN_GENERIC_MOVE_CHUNK_SIZE",
    "MNCORE_USE_EXTERNAL_DATA_FORMAT",
    "PFVM_DISABLE_CONSTANT_REUSE"};

TEST(OptionTable, HoldsEveryOptionOfTheDocument) {
  EXPECT_EQ(std::size(kDocumentOptions), 10u);
  EXPECT_EQ(std::size(kDocumentVariables), 37u);
  for (const char *name : kDocumentOptions) {
    const OptionInfo *info = lookupOption(name);
    ASSERT_NE(info, nullptr) << name << " is missing";
    EXPECT_EQ(info->kind, OptionKind::Arg) << name;
  }
  for (const char *name : kDocumentVariables) {
    const OptionInfo *info = lookupOption(name);
    ASSERT_NE(info, nullptr) << name << " is missing";
    EXPECT_EQ(info->kind, OptionKind::Env) << name;
  }
  // Nothing beyond the document: 10 + 37 entries, each once.
  EXPECT_EQ(getOptionTable().size(), 47u);
  std::set<std::string> names;
  for (const OptionInfo &info : getOptionTable())
    EXPECT_TRUE(names.insert(info.name).second) << info.name << " twice";
}

TEST(OptionTable, EveryEntryHasATypeADefaultADescriptionAndAReader) {
  const CompileOptions defaults;
  for (const OptionInfo &info : getOptionTable()) {
    SCOPED_TRACE(info.name);
    EXPECT_EQ(&getOptionInfo(info.id), &info);
    EXPECT_FALSE(optionTypeName(info.type).empty());
    EXPECT_GT(std::string(info.description).size(), 10u);
    EXPECT_GT(std::string(info.reader).size(), 3u);
    // The default is a value the option accepts: it reads back as itself.
    CompileOptions copy;
    std::string text = defaults.getText(info.id);
    EXPECT_FALSE(static_cast<bool>(copy.setText(info.id, text)));
    EXPECT_EQ(copy.getText(info.id), text);
    EXPECT_TRUE(copy.isDefault(info.id));
    if (info.type == OptionType::Int || info.type == OptionType::Float) {
      double value = std::stod(text);
      EXPECT_LE(info.min, value);
      EXPECT_GE(info.max, value);
    }
    if (info.status == OptionStatus::Implemented)
      EXPECT_EQ(info.issue, kNoIssue);
    else
      EXPECT_TRUE(info.issue == kLater || info.issue > 0);
  }
}

TEST(OptionTable, EnumDefaultsAreAmongTheirValues) {
  const CompileOptions defaults;
  unsigned enums = 0;
  for (const OptionInfo &info : getOptionTable()) {
    if (info.type != OptionType::Enum) {
      EXPECT_TRUE(info.values.empty()) << info.name;
      continue;
    }
    ++enums;
    SCOPED_TRACE(info.name);
    ASSERT_FALSE(info.values.empty());
    std::string value = defaults.getText(info.id);
    bool found = false;
    std::set<std::string> spellings;
    for (const EnumValueInfo &enumValue : info.values) {
      found |= value == enumValue.spelling;
      EXPECT_TRUE(spellings.insert(enumValue.spelling).second);
      EXPECT_GT(std::string(enumValue.description).size(), 5u);
    }
    EXPECT_TRUE(found) << value;
  }
  EXPECT_EQ(enums, 4u);
}

TEST(OptionTable, DefaultsAreTheDocumentsWhereItGivesOne) {
  const CompileOptions options;
  EXPECT_EQ(options.float_dtype, FloatDtype::Mixed);
  EXPECT_EQ(options.layout_planner, LayoutPlanner::Lpz);
  EXPECT_EQ(options.scheduler, Scheduler::ReuseConsecutive);
  EXPECT_EQ(options.simulation_mode, SimulationMode::Auto);
  EXPECT_EQ(options.sram_budget, 1.0);
  EXPECT_EQ(options.sa_expected_run_iters, 0);
  EXPECT_EQ(options.CODEGEN_SA_STEPS, 1000000);
  EXPECT_EQ(options.CODEGEN_NUM_SA_THREADS, 1);
  EXPECT_EQ(options.CODEGEN_N_TRANSPOSE_THREADS, 8);
  EXPECT_EQ(options.CODEGEN_N_DEV_COPY_STREAMS_THREADS, 8);
  EXPECT_EQ(options.CODEGEN_MAX_TIME_SLICE, 256);
  EXPECT_EQ(options.CODEGEN_GENERIC_MOVE_CHUNK_SIZE, -1);
  EXPECT_EQ(options.CODEGEN_SCHEDULE_PP_BEAM_MAX_TURN, -1);
  EXPECT_FALSE(options.CODEGEN_CONV_AGGRESSIVE_TIME_SLICING);
  EXPECT_FALSE(options.CODEGEN_GN_AGGRESSIVE_TIME_SLICING);
}

TEST(OptionTable, StatusesAndIssues) {
  auto issueOf = [](const char *name) { return lookupOption(name)->issue; };
  auto implemented = [](const char *name) {
    return lookupOption(name)->status == OptionStatus::Implemented;
  };
  EXPECT_TRUE(implemented("option_json"));
  EXPECT_TRUE(implemented("CODEGEN_N_TRANSPOSE_THREADS"));
  EXPECT_TRUE(implemented("MNCORE_USE_EXTERNAL_DATA_FORMAT"));
  // The first code-generator slice (issue 14) acts on these.
  for (const char *name :
       {"float_dtype", "layout_spec", "gemm_layout_spec",
        "CODEGEN_ALLOW_UNUSED_LAYOUT_SPEC", "CODEGEN_GEMM_FORCE_WEIGHT_ON_DRAM",
        "CODEGEN_IGNORE_LAYOUT_CHECK", "layout_planner", "scheduler"}) {
    EXPECT_TRUE(implemented(name)) << name;
    EXPECT_EQ(issueOf(name), kNoIssue) << name;
  }
  EXPECT_TRUE(implemented("CODEGEN_OPS_ON_HOST"));
  EXPECT_EQ(issueOf("CODEGEN_GN_AGGRESSIVE_TIME_SLICING"), 15);
  // The pfvm phase (issue 16) acts on these.
  for (const char *name :
       {"out_onnx", "PFVM_DISABLE_CONSTANT_REUSE",
        "CODEGEN_SKIP_RESOLVE_NEGATIVE_INDICES", "CODEGEN_DEFER_SIMPLIFY",
        "CODEGEN_SKIP_OPTIMIZER_FUSION"}) {
    EXPECT_TRUE(implemented(name)) << name;
    EXPECT_EQ(issueOf(name), kNoIssue) << name;
  }
  for (const char *name : {"simulation_mode", "CODEGEN_USE_MERGE",
                           "CODEGEN_SA_STEPS", "CODEGEN_MAX_TIME_SLICE"})
    EXPECT_EQ(issueOf(name), kLater) << name;
  // Enum values carry their own: the first slice has legacy and
  // always_from_dram.
  const OptionInfo *planner = lookupOption("layout_planner");
  EXPECT_EQ(planner->values[static_cast<int>(LayoutPlanner::Legacy)].issue,
            kNoIssue);
  EXPECT_EQ(planner->values[static_cast<int>(LayoutPlanner::Lpz)].issue,
            kLater);
  const OptionInfo *scheduler = lookupOption("scheduler");
  EXPECT_EQ(
      scheduler->values[static_cast<int>(Scheduler::AlwaysFromDram)].issue,
      kNoIssue);
  EXPECT_EQ(
      scheduler->values[static_cast<int>(Scheduler::AutoRecomputeSa)].issue,
      kLater);
}

std::string setError(CompileOptions &options, const char *name,
                     const char *text) {
  llvm::Error error = options.setText(lookupOption(name)->id, text);
  return error ? llvm::toString(std::move(error)) : "";
}

TEST(OptionValues, BooleansAcceptTheUsualSpellings) {
  CompileOptions options;
  for (const char *yes : {"1", "true", "TRUE", "on", "yes", "Yes"}) {
    options.CODEGEN_USE_MERGE = false;
    EXPECT_EQ(setError(options, "CODEGEN_USE_MERGE", yes), "");
    EXPECT_TRUE(options.CODEGEN_USE_MERGE) << yes;
  }
  for (const char *no : {"0", "false", "off", "no", "NO"}) {
    options.CODEGEN_USE_MERGE = true;
    EXPECT_EQ(setError(options, "CODEGEN_USE_MERGE", no), "");
    EXPECT_FALSE(options.CODEGEN_USE_MERGE) << no;
  }
  EXPECT_EQ(setError(options, "CODEGEN_USE_MERGE", "2"),
            "expected a boolean (1, 0, true, false, on, off, yes, no)");
  EXPECT_EQ(options.getText(OptionId::CODEGEN_USE_MERGE), "0");
}

TEST(OptionValues, NumbersAreCheckedAgainstTheirRange) {
  CompileOptions options;
  EXPECT_EQ(setError(options, "sram_budget", "1.5"), "must be between 0 and 1");
  EXPECT_EQ(setError(options, "sram_budget", "-0.1"),
            "must be between 0 and 1");
  EXPECT_EQ(setError(options, "sram_budget", "half"), "expected a number");
  EXPECT_EQ(setError(options, "sram_budget", "nan"), "expected a number");
  EXPECT_EQ(setError(options, "sram_budget", " 0.5"), "expected a number");
  EXPECT_EQ(options.sram_budget, 1.0);
  EXPECT_EQ(setError(options, "sram_budget", "0.25"), "");
  EXPECT_EQ(options.sram_budget, 0.25);
  EXPECT_EQ(options.getText(OptionId::sram_budget), "0.25");
  EXPECT_EQ(setError(options, "sram_budget", "0.1"), "");
  EXPECT_EQ(options.getText(OptionId::sram_budget), "0.1");

  EXPECT_EQ(setError(options, "sa_expected_run_iters", "-1"),
            "must be at least 0");
  EXPECT_EQ(setError(options, "sa_expected_run_iters", "1.5"),
            "expected an integer");
  EXPECT_EQ(setError(options, "CODEGEN_NUM_SA_THREADS", "0"),
            "must be between 1 and 1024");
  EXPECT_EQ(setError(options, "CODEGEN_SCHEDULE_PP_BEAM_MAX_TURN", "-2"),
            "must be at least -1");
  EXPECT_EQ(setError(options, "CODEGEN_GENERIC_MOVE_CHUNK_SIZE", "0"),
            "expected -1 (off) or a positive number of long words");
  EXPECT_EQ(setError(options, "CODEGEN_GENERIC_MOVE_CHUNK_SIZE", "64"), "");
  EXPECT_EQ(options.CODEGEN_GENERIC_MOVE_CHUNK_SIZE, 64);
  EXPECT_EQ(setError(options, "CODEGEN_SA_STEPS", "99999999999999999999"),
            "expected an integer");
}

TEST(OptionValues, EnumsListTheirValues) {
  CompileOptions options;
  EXPECT_EQ(setError(options, "float_dtype", "quad"),
            "expected one of mixed, half, float, double");
  EXPECT_EQ(setError(options, "float_dtype", "Float"),
            "expected one of mixed, half, float, double");
  EXPECT_EQ(setError(options, "scheduler", "auto_recompute_sa"), "");
  EXPECT_EQ(options.scheduler, Scheduler::AutoRecomputeSa);
  EXPECT_EQ(options.getText(OptionId::scheduler), "auto_recompute_sa");
}

TEST(OptionValues, Lists) {
  CompileOptions options;
  EXPECT_EQ(setError(options, "CODEGEN_OPS_ON_HOST", "Exp, Log"), "");
  EXPECT_EQ(options.CODEGEN_OPS_ON_HOST, (StringList{"Exp", "Log"}));
  EXPECT_EQ(options.getText(OptionId::CODEGEN_OPS_ON_HOST), "Exp,Log");
  EXPECT_EQ(setError(options, "CODEGEN_OPS_ON_HOST", "Exp,,Log"),
            "expected items separated by commas, without empty ones");
  EXPECT_EQ(setError(options, "CODEGEN_OPS_ON_HOST", ""), "");
  EXPECT_TRUE(options.CODEGEN_OPS_ON_HOST.empty());

  EXPECT_EQ(setError(options, "CODEGEN_OP_DEF",
                     "Gather=GatherReduce,ChainerIndexAdd=IndexAddReduce"),
            "");
  ASSERT_EQ(options.CODEGEN_OP_DEF.size(), 2u);
  EXPECT_EQ(options.CODEGEN_OP_DEF[1].first, "ChainerIndexAdd");
  EXPECT_EQ(options.CODEGEN_OP_DEF[1].second, "IndexAddReduce");
  EXPECT_EQ(setError(options, "CODEGEN_OP_DEF", "Gather"),
            "expected KEY=VALUE items separated by commas; 'Gather' is not "
            "KEY=VALUE");
}

TEST(OptionValues, NotImplementedNotesNameTheIssue) {
  CompileOptions options;
  // The defaults lpz and reuse_consecutive run as legacy and
  // always_from_dram: reported.
  std::vector<std::string> defaults = notImplementedNotes(options);
  ASSERT_EQ(defaults.size(), 2u);
  EXPECT_EQ(defaults[0],
            "layout_planner=lpz: accepted, not implemented (later)");
  EXPECT_EQ(defaults[1],
            "scheduler=reuse_consecutive: accepted, not implemented (later)");
  options.layout_planner = LayoutPlanner::Legacy;
  options.CODEGEN_N_TRANSPOSE_THREADS = 2; // implemented: no note
  options.float_dtype = FloatDtype::Half;  // implemented: no note
  options.scheduler = Scheduler::SpillOpt;
  options.CODEGEN_OPS_ON_HOST = {"Exp"}; // implemented: no note
  options.CODEGEN_USE_MERGE = true;
  options.CODEGEN_GN_AGGRESSIVE_TIME_SLICING = true;
  std::vector<std::string> notes = notImplementedNotes(options);
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_EQ(notes[0], "scheduler=spill_opt: accepted, not implemented (later)");
  EXPECT_EQ(notes[1], "CODEGEN_USE_MERGE=1: accepted, not implemented (later)");
  EXPECT_EQ(notes[2], "CODEGEN_GN_AGGRESSIVE_TIME_SLICING=1: accepted, not "
                      "implemented (issue 15)");
}

TEST(OptionEnvironment, KeepsOnlyMlsdkNames) {
  const char *environment[] = {
      "PATH=/bin", "CODEGEN_USE_MERGE=1",      "MNCORE_X=a=b",
      "PFVM_Y=",   "MNCC_REFERENCE_THREADS=4", "codegen_z=1",
      nullptr};
  OptionEnvironment read = collectOptionEnvironment(environment);
  EXPECT_EQ(read, (OptionEnvironment{{"CODEGEN_USE_MERGE", "1"},
                                     {"MNCORE_X", "a=b"},
                                     {"PFVM_Y", ""}}));
}

} // namespace
