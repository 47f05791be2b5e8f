# -*- Python -*-
# Every GoogleTest binary in build/unittests whose name ends in "Tests";
# each GoogleTest case counts as one lit test.

import os

import lit.formats

config.name = "mncc-unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.mncc_obj_root, "unittests")
config.test_source_root = config.test_exec_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
