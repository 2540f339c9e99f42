# Generates a C++ source holding every Lua script under adapters/lua as a string, so the engine
# and the simulated Redis load the very same text. Run as: cmake -DOUT=... -DSCRIPTS=a;b -P this.
#
# The shared functions of adapters/lua/lib (LUA_LIB) are prepended to the scripts that use them:
# the decision journal's (journal.lua) to every script that calls journal_of() or journal_for(),
# so every script journals through the same functions; the one-entry read (read_one.lua, which
# journals too) to every script that calls read_one(); the step between two events
# (next_step.lua) to every script that calls next_step(); the effect sink's commit
# (commit_effect.lua) to every script that calls commit_effect(); and the commit carried by the
# step (commit_next.lua, which calls the two before) to every script that calls
# commit_next_step(). The journal's functions go to every script that calls journal() through
# them too (fenced_steps journals nothing but runs the libraries that would). The check of a
# script's writes before its first (permitted.lua) goes to every script that calls
# refused_write().
#
# The KNOWN-BROKEN variants' unfenced_read, unfenced_ack, unfenced_commit, unfenced_next and
# unfenced_commit_next are not files: each is generated here from its fenced_* script by deleting
# the script's lease check (the three lines below, which journal the refusal as STEP_fenced;
# fenced_next's as read_fenced, fenced_commit_next's as commit_fenced), so the two can never
# drift apart. A fenced script without that exact check fails
# the build.
cmake_policy(SET CMP0057 NEW)  # if(IN_LIST) in script mode
set(unfenced_of_fenced read ack commit next commit_next)
file(READ ${LUA_LIB}/journal.lua journal_lib)
file(READ ${LUA_LIB}/read_one.lua read_one_lib)
file(READ ${LUA_LIB}/next_step.lua next_step_lib)
file(READ ${LUA_LIB}/commit_effect.lua commit_effect_lib)
file(READ ${LUA_LIB}/commit_next.lua commit_next_lib)
file(READ ${LUA_LIB}/permitted.lua permitted_lib)

set(names "")
foreach(path IN LISTS SCRIPTS)
  get_filename_component(name ${path} NAME_WE)
  file(READ ${path} text_${name})
  # Each library is prepended before the ones it calls, so every function is defined before use.
  string(FIND "${text_${name}}" "commit_next_step(" commit_steps)
  if(NOT commit_steps EQUAL -1)
    set(text_${name} "${commit_next_lib}${text_${name}}")
  endif()
  string(FIND "${text_${name}}" "commit_effect(" commits)
  if(NOT commits EQUAL -1)
    set(text_${name} "${commit_effect_lib}${text_${name}}")
  endif()
  string(FIND "${text_${name}}" "next_step(" steps)
  if(NOT steps EQUAL -1)
    set(text_${name} "${next_step_lib}${text_${name}}")
  endif()
  string(FIND "${text_${name}}" "read_one(" reads)
  if(NOT reads EQUAL -1)
    set(text_${name} "${read_one_lib}${text_${name}}")
  endif()
  string(FIND "${text_${name}}" "refused_write(" checks_writes)
  if(NOT checks_writes EQUAL -1)
    set(text_${name} "${permitted_lib}${text_${name}}")
  endif()
  string(FIND "${text_${name}}" "journal_of(" journals)
  string(FIND "${text_${name}}" "journal_for(" journals_for)
  string(FIND "${text_${name}}" "journal(" journal_calls)
  if(NOT journals EQUAL -1 OR NOT journals_for EQUAL -1 OR NOT journal_calls EQUAL -1)
    set(text_${name} "${journal_lib}${text_${name}}")
  endif()
  list(APPEND names ${name})
  string(REGEX REPLACE "^fenced_" "" step ${name})
  if(name MATCHES "^fenced_" AND step IN_LIST unfenced_of_fenced)
    set(refused_op ${step})
    if(step STREQUAL "next")
      set(refused_op read)
    elseif(step STREQUAL "commit_next")
      set(refused_op commit)
    endif()
    set(lease_check "if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return fenced(J, '${refused_op}_fenced')
end
")
    string(FIND "${text_${name}}" "${lease_check}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${path}: no lease check to remove for unfenced_${step}")
    endif()
    string(REPLACE "${lease_check}" "" stripped "${text_${name}}")
    set(text_unfenced_${step}
        "-- unfenced_${step}: the KNOWN-BROKEN variants' ${name}.lua without its lease check (generated
-- by cmake/embed_scripts.cmake; selected only by RedisBrokerOptions::unfenced in simulated runs).
-- Rejected by the ADR (decision 5, \"The generation is the fence\"): a stale owner would go on.
${stripped}")
    list(APPEND names unfenced_${step})
  endif()
endforeach()

set(body "// Generated from adapters/lua/*.lua by cmake/embed_scripts.cmake. Do not edit.\n")
string(APPEND body "#include \"seqby/broker/scripts.h\"\n\nnamespace seqby::redis {\nnamespace {\n")
set(table "")
list(SORT names)
foreach(name IN LISTS names)
  string(APPEND body "constexpr char k_${name}[] = R\"seqbylua(${text_${name}})seqbylua\";\n")
  string(APPEND table "    {\"${name}\", k_${name}},\n")
endforeach()
string(APPEND body "constexpr EmbeddedScript kScripts[] = {\n${table}};\n}  // namespace\n\n")
string(APPEND body "std::span<const EmbeddedScript> embedded_scripts() { return kScripts; }\n\n")
string(APPEND body "}  // namespace seqby::redis\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
