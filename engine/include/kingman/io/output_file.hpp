#pragma once
// Writing result files without leaving partial output: content goes to a temporary file in the
// same folder, which is renamed over the target only when complete. "-" means stdout.
#include <string>

namespace kingman {

void write_output_file(const std::string& path, const std::string& content);

}  // namespace kingman
