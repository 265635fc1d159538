// `cedana-slurm daemon [start|status|stop]` and `cedana-slurm token create`: the command-line
// side of the controller (src/controller). Each returns the process exit code.
#pragma once

#include <string>

namespace cedana::controller {

int ControllerCommand(const std::string& action);
int CreateToken(const std::string& user, bool admin);

}  // namespace cedana::controller
