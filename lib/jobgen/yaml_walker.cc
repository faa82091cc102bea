// Copyright dist-train authors. SPDX-License-Identifier: MIT
// Over 400 lines: the whole yaml-cpp adapter (typed reads, key tables, the
// exceptions caught), so that no other file sees yaml-cpp.
#include "jobgen/yaml_walker.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <sstream>
#include <string_view>

#include "base/parse.h"
#include "jobgen/input_file.h"

namespace dist_train {
namespace {

std::string Where(const YamlSource& src, const YAML::Node& node,
                  const std::string& path) {
  for (const std::string& s : src.from_set) {
    if (path == s || path.rfind(s + ".", 0) == 0) return "--set " + s;
  }
  YAML::Mark m = node.Mark();
  if (m.line < 0) return src.file;
  return src.file + ":" + std::to_string(m.line + 1) + ":" +
         std::to_string(m.column + 1);
}

bool ValidVarName(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char ch : s) {
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
          (ch >= '0' && ch <= '9') || ch == '_'))
      return false;
  }
  return true;
}

std::vector<std::string> Keys(const KeyTable& table) {
  std::vector<std::string> keys;
  for (const auto& [k, h] : table) keys.push_back(k);
  return keys;
}

std::string KeyName(const YAML::Node& key) {
  return key.IsScalar() ? key.Scalar() : "?";
}

std::string At(const std::string& file, const YAML::Mark& m) {
  return file + ":" + std::to_string(m.line + 1) + ":" +
         std::to_string(m.column + 1);
}

// Sees each document's start and nothing else.
class DocumentCounter : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    stuck = count > 0 && mark.pos == last.pos;
    last = mark, ++count;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  size_t count = 0;
  YAML::Mark last;
  bool stuck = false;  // the last document started where the one before did
};

// A second YAML document would be ignored silently by a plain load. The
// documents are counted with a parser of our own rather than YAML::LoadAll:
// on a token no value can start with outside brackets (",a:", "---\n,")
// yaml-cpp 0.7's parser neither consumes it nor fails, but reports another
// empty document starting at it, and LoadAll collects those until memory
// runs out (std::bad_alloc after ~10 s and all memory). Two documents
// starting at the same token are that loop.
Status CheckOneDocument(const std::string& text, const std::string& file) {
  std::stringstream in(text);
  YAML::Parser parser(in);
  DocumentCounter docs;
  while (parser.HandleNextDocument(docs)) {
    if (docs.stuck) {
      std::string token = docs.last.pos < static_cast<int>(text.size())
                              ? std::string(1, text[docs.last.pos])
                              : "end of file";
      return Status::InvalidArgument(At(file, docs.last) +
                                     ": YAML syntax error: unexpected '" +
                                     token + "'");
    }
  }
  if (docs.count > 1) {
    return Status::InvalidArgument(
        file + " holds " + std::to_string(docs.count) +
        " YAML documents; gen-sbatch reads exactly one");
  }
  return Status::OK();
}

// Aliases let a small file stand for a huge document: each *a re-reads the
// anchored value, and anchors of aliases multiply ("billion laughs"). Walked
// alias by alias, as the schema code reads it, a document within
// kMaxInputBytes has fewer nodes and scalar bytes than these caps unless
// aliases blow it up (or loop: an anchor may hold an alias of itself).
constexpr size_t kMaxExpandedNodes = 1000000;
constexpr size_t kMaxExpandedBytes = 4 * kMaxInputBytes;

Status CheckExpandedSize(const YAML::Node& root, const std::string& file) {
  std::vector<YAML::Node> todo = {root};
  size_t nodes = 1, bytes = 0;
  auto push = [&](const YAML::Node& n) { todo.push_back(n), ++nodes; };
  while (!todo.empty() && nodes <= kMaxExpandedNodes &&
         bytes <= kMaxExpandedBytes) {
    YAML::Node n = todo.back();
    todo.pop_back();
    if (n.IsScalar()) bytes += n.Scalar().size();
    for (auto it = n.begin(); it != n.end() && nodes <= kMaxExpandedNodes;
         ++it) {
      if (n.IsMap()) {
        push(it->first), push(it->second);
      } else {
        push(*it);
      }
    }
  }
  if (nodes <= kMaxExpandedNodes && bytes <= kMaxExpandedBytes)
    return Status::OK();
  return Status::InvalidArgument(
      file + ": with its aliases expanded the YAML document holds more than " +
      std::to_string(kMaxExpandedNodes) + " values or " +
      std::to_string(kMaxExpandedBytes) + " bytes of text");
}

Status LoadDocument(const std::string& text, const std::string& file,
                    YAML::Node* out) {
  try {
    DT_RETURN_IF_ERROR(CheckOneDocument(text, file));
    YAML::Node root = YAML::Load(text);
    DT_RETURN_IF_ERROR(CheckExpandedSize(root, file));
    *out = root;
    return Status::OK();
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own message is "bad file".
    return Status::InvalidArgument(At(file, e.mark) +
                                   ": YAML nested too deeply (" +
                                   std::to_string(e.depth()) + " levels)");
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) return Status::InvalidArgument(file + ": " + e.msg);
    return Status::InvalidArgument(At(file, e.mark) +
                                   ": YAML syntax error: " + e.msg);
  } catch (const std::bad_alloc&) {
    return Status::InvalidArgument(file + ": out of memory reading the YAML");
  }
}

}  // namespace

std::string DescribeNode(const YAML::Node& node) {
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "nothing";
}

Status YamlError(const YamlSource& src, const YAML::Node& node,
                 const std::string& path, const std::string& msg) {
  return Status::InvalidArgument(Where(src, node, path) + ": " + path + ": " +
                                 msg);
}

Status ReadString(const YamlSource& src, const YAML::Node& node,
                  const std::string& path, std::string* out) {
  if (!node.IsScalar()) {
    return YamlError(src, node, path,
                     "expected a string, got " + DescribeNode(node));
  }
  if (node.Scalar().find('\0') != std::string::npos) {
    return YamlError(src, node, path, "contains a NUL character");
  }
  *out = node.Scalar();
  return Status::OK();
}

Status ReadUint(const YamlSource& src, const YAML::Node& node,
                const std::string& path, uint64_t min, uint64_t max,
                uint32_t* out) {
  uint64_t v = 0;
  if (!node.IsScalar() || !ParseUint(node.Scalar(), min, max, &v)) {
    return YamlError(src, node, path,
                     "expected an integer from " + std::to_string(min) +
                         " to " + std::to_string(max) + ", got " +
                         DescribeNode(node));
  }
  *out = static_cast<uint32_t>(v);
  return Status::OK();
}

Status ReadBool(const YamlSource& src, const YAML::Node& node,
                const std::string& path, bool* out) {
  const std::string s = node.IsScalar() ? node.Scalar() : "";
  for (const char* t : {"true", "True", "TRUE", "yes"}) {
    if (s == t) return *out = true, Status::OK();
  }
  for (const char* f : {"false", "False", "FALSE", "no"}) {
    if (s == f) return *out = false, Status::OK();
  }
  return YamlError(src, node, path,
                   "expected true or false, got " + DescribeNode(node));
}

Status ReadNumber(const YamlSource& src, const YAML::Node& node,
                  const std::string& path, double* out) {
  if (node.IsScalar()) {
    char* end = nullptr;
    const std::string& s = node.Scalar();
    double v = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size())
      return *out = v, Status::OK();
  }
  return YamlError(src, node, path,
                   "expected a number, got " + DescribeNode(node));
}

Status ReadStringList(const YamlSource& src, const YAML::Node& node,
                      const std::string& path, std::vector<std::string>* out) {
  if (!node.IsSequence()) {
    return YamlError(src, node, path,
                     "expected a list, got " + DescribeNode(node));
  }
  std::vector<std::string> v;
  for (size_t i = 0; i < node.size(); ++i) {
    std::string s;
    DT_RETURN_IF_ERROR(
        ReadString(src, node[i], path + "[" + std::to_string(i) + "]", &s));
    v.push_back(s);
  }
  *out = v;
  return Status::OK();
}

Status ReadVarName(const YamlSource& src, const YAML::Node& node,
                   const std::string& path, std::string* out) {
  DT_RETURN_IF_ERROR(ReadString(src, node, path, out));
  if (!ValidVarName(*out)) {
    return YamlError(
        src, node, path,
        "'" + *out + "' is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)");
  }
  return Status::OK();
}

Status NoDuplicateKeys(const YamlSource& src, const YAML::Node& map,
                       const std::string& section) {
  std::set<std::string> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    std::string key = KeyName(it->first);
    if (!seen.insert(key).second) {
      return YamlError(src, it->first,
                       section.empty() ? key : section + "." + key,
                       "given twice");
    }
  }
  return Status::OK();
}

KeyHandler StringKey(const YamlSource& src, std::string* out) {
  return [&src, out](const YAML::Node& v, const std::string& p) {
    return ReadString(src, v, p, out);
  };
}

KeyHandler UintKey(const YamlSource& src, uint64_t min, uint64_t max,
                   uint32_t* out) {
  return [&src, min, max, out](const YAML::Node& v, const std::string& p) {
    return ReadUint(src, v, p, min, max, out);
  };
}

KeyHandler BoolKey(const YamlSource& src, bool* out) {
  return [&src, out](const YAML::Node& v, const std::string& p) {
    return ReadBool(src, v, p, out);
  };
}

KeyHandler StringListKey(const YamlSource& src, std::vector<std::string>* out) {
  return [&src, out](const YAML::Node& v, const std::string& p) {
    return ReadStringList(src, v, p, out);
  };
}

namespace {

// Every key's error, one per line (so a file is fixed in one round), at
// most kMaxErrors lines; one error keeps its own code.
Status Combined(const std::vector<Status>& errors) {
  constexpr size_t kMaxErrors = 50;
  if (errors.empty()) return Status::OK();
  if (errors.size() == 1) return errors[0];
  std::string all;
  size_t lines = 0;
  for (const Status& e : errors) {
    for (std::string_view line : Split(e.message(), '\n')) {
      if (++lines > kMaxErrors) continue;
      all += (all.empty() ? "" : "\n") + std::string(line);
    }
  }
  if (lines > kMaxErrors)
    all += "\n... and " + std::to_string(lines - kMaxErrors) + " more errors";
  return Status::InvalidArgument(all);
}

}  // namespace

Status WalkMap(const YamlSource& src, const YAML::Node& map,
               const std::string& section, const KeyTable& table) {
  if (!map || map.IsNull()) return Status::OK();
  if (!map.IsMap()) {
    return YamlError(src, map, section,
                     "expected a mapping, got " + DescribeNode(map));
  }
  DT_RETURN_IF_ERROR(NoDuplicateKeys(src, map, section));
  std::vector<Status> errors;
  for (auto it = map.begin(); it != map.end(); ++it) {
    std::string key = KeyName(it->first);
    std::string path = section.empty() ? key : section + "." + key;
    auto h = std::find_if(table.begin(), table.end(),
                          [&](const auto& e) { return e.first == key; });
    if (h == table.end()) {
      std::string msg = "unknown key '" + key + "'";
      std::string near = NearestWord(key, Keys(table));
      if (!near.empty()) msg += " (did you mean '" + near + "'?)";
      msg += "; valid keys: " + JoinAlternatives(Keys(table));
      errors.push_back(Status::InvalidArgument(
          Where(src, it->first, path) + ": " +
          (section.empty() ? std::string("top level") : section) + ": " + msg));
      continue;
    }
    Status s = h->second(it->second, path);
    if (!s.ok()) errors.push_back(s);
  }
  return Combined(errors);
}

Status LoadYamlFile(const std::string& path, YAML::Node* out) {
  std::string text;
  DT_RETURN_IF_ERROR(ReadInputFile(path, kMaxInputBytes, &text));
  return LoadDocument(text, path, out);
}

Status LoadYamlText(const std::string& text, const std::string& name,
                    YAML::Node* out) {
  return LoadDocument(text, name, out);
}

Status LoadYamlValue(const std::string& text, YAML::Node* out) {
  try {
    *out = YAML::Load(text);
    return Status::OK();
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(e.msg);
  } catch (const std::bad_alloc&) {
    return Status::InvalidArgument("out of memory reading the value");
  }
}

Status ReplaceAtPath(YAML::Node root, const std::vector<std::string>& keys,
                     const YAML::Node& value) {
  if (keys.empty()) return Status::InvalidArgument("no key to set");
  std::vector<YAML::Node> chain = {root};
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    YAML::Node next = chain.back()[keys[i]];
    if (next && !next.IsMap() && !next.IsNull()) {
      return Status::InvalidArgument(keys[i] + " is not a mapping");
    }
    chain.push_back(next);
  }
  // Replace the entry (remove, then add) rather than assign through it: an
  // assignment would change every alias of an anchored value too.
  chain.back().remove(keys.back());
  chain.back()[keys.back()] = value;
  return Status::OK();
}

Status CatchYamlErrors(const std::string& file,
                       const std::function<Status()>& fn) {
  try {
    return fn();
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(file + ": " + e.msg);
  } catch (const std::bad_alloc&) {
    return Status::InvalidArgument(file + ": out of memory");
  }
}

}  // namespace dist_train
