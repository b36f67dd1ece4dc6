// Folded stacks rendered as an SVG flame graph (render/flamegraph.h). Frame
// names come from the target (perf maps, ELF symbols), so they may hold
// markup, quotes, newlines and invalid UTF-8. Checks: the SVG is well-formed
// XML (libxml2), and its structure (which elements and attributes appear, how
// many of each) does not depend on the names: rendering the same stacks with
// every name replaced by a harmless one of the same length gives the same
// structure, so no name can inject an element, an attribute or a script.
//
// Input: folded text as flamegraph.pl reads it (fold/folded_reader.h), which
// this target fuzzes too.
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <map>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "fold/folded_profile.h"
#include "fold/folded_reader.h"
#include "render/flamegraph.h"
#include "tests/fuzz/fuzz_support.h"

using profcpu::fuzz::Check;
namespace fold = profcpu::fold;
namespace render = profcpu::render;

namespace {

// Each distinct name becomes "nID" padded with 'x' to the name's length.
fold::FoldedProfile Neutralize(const fold::FoldedProfile& profile) {
  fold::FoldedProfile out;
  out.count_name = profile.count_name;
  out.differential = profile.differential;
  out.count_unit = profile.count_unit;
  std::vector<std::string> names;
  for (size_t id = 0; id < profile.names().size(); ++id) {
    std::string name = absl::StrCat("n", id + 1);
    if (name.size() < profile.name(id).size()) name.resize(profile.name(id).size(), 'x');
    names.push_back(std::move(name));
  }
  std::vector<absl::string_view> frames;
  for (const fold::FoldedStack& stack : profile.stacks) {
    frames.clear();
    for (uint32_t id : stack.frames) frames.push_back(names[id]);
    out.AddStack(frames, stack.count, stack.baseline);
  }
  return out;
}

// Element and attribute names with their counts; aborts if not well-formed.
std::map<std::string, int> Structure(const std::string& svg) {
  xmlDocPtr doc = xmlReadMemory(svg.data(), static_cast<int>(svg.size()), "flamegraph.svg",
                                nullptr, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  Check(doc != nullptr, "the flame graph is not well-formed XML");
  std::map<std::string, int> counts;
  std::vector<xmlNodePtr> pending = {xmlDocGetRootElement(doc)};
  while (!pending.empty()) {
    xmlNodePtr node = pending.back();
    pending.pop_back();
    for (; node != nullptr; node = node->next) {
      if (node->type != XML_ELEMENT_NODE) continue;
      ++counts[absl::StrCat("<", reinterpret_cast<const char*>(node->name))];
      for (xmlAttrPtr a = node->properties; a != nullptr; a = a->next) {
        ++counts[absl::StrCat("@", reinterpret_cast<const char*>(a->name))];
      }
      if (node->children != nullptr) pending.push_back(node->children);
    }
  }
  xmlFreeDoc(doc);
  return counts;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fold::FoldedReadStats stats;
  fold::FoldedProfile profile = fold::ParseFoldedText(profcpu::fuzz::AsText(data, size), &stats);
  Check(stats.lines >= profile.stacks.size(), "more stacks than lines");
  fold::FoldedProfile neutral = Neutralize(profile);
  render::FlameGraphOptions options;
  render::FlameGraphOptions inverted;
  inverted.inverted = true;
  inverted.hash_colors = true;
  inverted.min_width = 0;
  // A subtree drawn blue, named by the input (colours only: the structure
  // check below holds whether the neutral names match it or not).
  if (!profile.stacks.empty() && profile.stacks[0].frames.size() > 1) {
    inverted.cool_subtree = profile.name(profile.stacks[0].frames[1]);
  }
  for (const auto& opts : {options, inverted}) {
    auto svg = render::RenderFlameGraph(profile, opts);
    Check(svg.ok(), "rendering failed with valid options");
    auto neutral_svg = render::RenderFlameGraph(neutral, opts);
    Check(neutral_svg.ok(), "rendering neutral names failed");
    std::map<std::string, int> structure = Structure(*svg);
    Check(structure == Structure(*neutral_svg),
          "frame names changed the SVG's structure (markup injected?)");
    // An empty profile gives a small SVG saying so, without the script.
    Check(structure["<script"] <= 1, "a frame name added a script to the flame graph");
  }
  return 0;
}
