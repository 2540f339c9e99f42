# Generates a C++ source holding the timeline page (scenarios/timeline/timeline.html: its HTML,
# style and script) as one string, so `seqby timeline` writes a self-contained page with no file
# beside the binary. Run as: cmake -DOUT=... -DPAGE=... -P this.
file(READ ${PAGE} page)
string(FIND "${page}" ")seqbyhtml\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${PAGE}: holds the raw string's end marker )seqbyhtml\"")
endif()
set(body "// Generated from scenarios/timeline/timeline.html by cmake/embed_timeline.cmake. Do not edit.\n")
string(APPEND body "#include <string_view>\n\nnamespace seqby::scenarios::timeline_detail {\n")
string(APPEND body "extern const std::string_view kTimelinePage;\n")
string(APPEND body "const std::string_view kTimelinePage = R\"seqbyhtml(${page})seqbyhtml\";\n")
string(APPEND body "}  // namespace seqby::scenarios::timeline_detail\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
