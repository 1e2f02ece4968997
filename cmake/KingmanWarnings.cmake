# kingman_apply_project_flags(target): warnings, sanitizer and CPU flags for one of our own
# targets. Nothing here touches global flags, so consumers and dependencies are unaffected.
function(kingman_apply_project_flags target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  if(KINGMAN_NATIVE)
    target_compile_options(${target} PRIVATE -march=native)
  endif()
  kingman_apply_sanitizer(${target})
endfunction()
