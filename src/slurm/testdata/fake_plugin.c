/* A stand-in for a SLURM plugin file in plugin_file_version_test: exports plugin_version as a
 * real plugin does, with the value FAKE_PLUGIN_VERSION (left out when it is not defined). */
#include <stdint.h>

#ifdef FAKE_PLUGIN_VERSION
__attribute__((visibility("default"))) const uint32_t plugin_version = FAKE_PLUGIN_VERSION;
#endif
__attribute__((visibility("default"))) const char plugin_name[] = "fake";
