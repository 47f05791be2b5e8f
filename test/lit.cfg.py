# -*- Python -*-
# The lit suite of mncc: FileCheck tests over the tools in build/bin.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "mncc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.mncc_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py"]

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

config.substitutions.append(("%mncc_src_root", config.mncc_src_root))
config.substitutions.append(("%mncc_obj_root", config.mncc_obj_root))
config.substitutions.append(("%cc", config.mncc_cc))
config.substitutions.append(
    ("%cmake_configure",
     '"%s" -G "%s" -DCMAKE_MAKE_PROGRAM="%s" -DCMAKE_BUILD_TYPE=Release%s'
     % (config.cmake_command, config.cmake_generator, config.make_program,
        (" -DCMAKE_CXX_COMPILER_LAUNCHER=" + config.ccache)
        if config.ccache else "")))
# After %cmake_configure, which it is a prefix of.
config.substitutions.append(("%cmake", config.cmake_command))

config.substitutions.append(("%python", config.python_executable))
testdata = "/usr/share/libonnx-testdata/data"
if os.path.isdir(testdata):
    config.available_features.add("onnx-testdata")
    config.substitutions.append(("%onnx_testdata", testdata))

tools = [ToolSubst("mncc-opt", unresolved="fatal")]
for name in ["mncc-conformance", "mncc-layout", "mncc-sim", "mncc-translate",
             "mncc"]:
    if os.path.exists(os.path.join(config.mncc_tools_dir, name)):
        tools.append(ToolSubst(name))
        config.available_features.add(name)
llvm_config.add_tool_substitutions(tools, [config.mncc_tools_dir])
