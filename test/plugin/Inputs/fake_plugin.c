/* A stand-in for a plugin built elsewhere: it exports MLIR's entry points
   with the layout of mlir::PassPluginLibraryInfo, but its API version and
   the libraries it is linked against are chosen by the test. */
#include <stdint.h>

#ifndef API_VERSION
#define API_VERSION 1
#endif

struct PluginInfo {
  uint32_t apiVersion;
  const char *pluginName;
  const char *pluginVersion;
  void (*registerCallbacks)(void *);
};

static void registerNothing(void *registry) { (void)registry; }

struct PluginInfo mlirGetPassPluginInfo(void) {
  struct PluginInfo info = {API_VERSION, "fake", "0", registerNothing};
  return info;
}
