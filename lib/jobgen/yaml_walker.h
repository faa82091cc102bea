// Copyright dist-train authors. SPDX-License-Identifier: MIT
//
// The adapter between yaml-cpp and gen-sbatch's schema: loading a document,
// reading typed values, walking a mapping through a table of known keys.
// This is the only header that includes yaml-cpp, and yaml-cpp exceptions
// are caught here and turned into Status (jobgen/job_spec.h stays free of
// it). Every error reads "FILE:LINE:COL: key.path: message", or
// "--set key.path: ..." when the value came from an override.

#ifndef DIST_TRAIN_LIB_JOBGEN_YAML_WALKER_H_
#define DIST_TRAIN_LIB_JOBGEN_YAML_WALKER_H_

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dist_train/status.h"

namespace dist_train {

// Where the values being read came from, for messages.
struct YamlSource {
  std::string file;                // the config file's name
  std::set<std::string> from_set;  // key paths replaced with --set
};

// "'two'", "a list", "a mapping" or "nothing": what a message says it got.
std::string DescribeNode(const YAML::Node& node);

// InvalidArgument "WHERE: path: msg", WHERE being FILE:LINE:COL of `node`
// (FILE alone when it has no position) or "--set KEY" when `path` is, or
// lies under, a key given with --set.
Status YamlError(const YamlSource& src, const YAML::Node& node,
                 const std::string& path, const std::string& msg);

// Typed reads of one value; `path` names it in errors. On error the whole
// load fails, so `*out` may be left half-set.
Status ReadString(const YamlSource& src, const YAML::Node& node,
                  const std::string& path, std::string* out);
Status ReadUint(const YamlSource& src, const YAML::Node& node,
                const std::string& path, uint64_t min, uint64_t max,
                uint32_t* out);
// true/True/TRUE/yes or false/False/FALSE/no.
Status ReadBool(const YamlSource& src, const YAML::Node& node,
                const std::string& path, bool* out);
Status ReadNumber(const YamlSource& src, const YAML::Node& node,
                  const std::string& path, double* out);
Status ReadStringList(const YamlSource& src, const YAML::Node& node,
                      const std::string& path, std::vector<std::string>* out);
// A shell variable name, [A-Za-z_][A-Za-z0-9_]*.
Status ReadVarName(const YamlSource& src, const YAML::Node& node,
                   const std::string& path, std::string* out);

// yaml-cpp keeps both entries of a repeated key; a silent "last wins" would
// hide typos, so a repeated key in `map` is an error.
Status NoDuplicateKeys(const YamlSource& src, const YAML::Node& map,
                       const std::string& section);

// Reads the value of one key; the second argument is its path ("job.nodes").
using KeyHandler = std::function<Status(const YAML::Node&, const std::string&)>;
// The keys a mapping may hold, in the order messages list them.
using KeyTable = std::vector<std::pair<std::string, KeyHandler>>;

// Handlers for plain values. They keep references to `src` and `out`, which
// must outlive the walk.
KeyHandler StringKey(const YamlSource& src, std::string* out);
KeyHandler UintKey(const YamlSource& src, uint64_t min, uint64_t max,
                   uint32_t* out);
KeyHandler BoolKey(const YamlSource& src, bool* out);
KeyHandler StringListKey(const YamlSource& src, std::vector<std::string>* out);

// Calls each key's handler in document order. A missing or null `map` is
// fine (nothing set); a non-mapping, a repeated key or a key not in `table`
// is an error, the last with "did you mean" and the list of valid keys.
// Every key is walked: the errors of all keys (and of nested walks) come
// back together, one per line, at most 50. `section` is "" at the top level.
Status WalkMap(const YamlSource& src, const YAML::Node& map,
               const std::string& section, const KeyTable& table);

// Loads exactly one YAML document from a file or from text; `name` stands
// for the text in messages. A syntax error names FILE:LINE:COL, a missing
// file is NotFound, a second document is an error. Hostile input is an
// error, never a crash or a memory blow-up: a file over kMaxInputBytes
// (jobgen/input_file.h), a token that makes yaml-cpp 0.7 loop (",a:"),
// nesting past yaml-cpp's depth guard, a document whose aliases expand to
// more than a million values or 4 MiB of text; std::bad_alloc is caught.
Status LoadYamlFile(const std::string& path, YAML::Node* out);
Status LoadYamlText(const std::string& text, const std::string& name,
                    YAML::Node* out);

// Parses one value given on the command line ("4", "[a, b]"); the error is
// yaml-cpp's message alone, for the caller to prefix.
Status LoadYamlValue(const std::string& text, YAML::Node* out);

// Replaces root[keys[0]]...[keys.back()] with `value`, creating mappings on
// the way. Error "KEY is not a mapping" when a key on the way holds a value;
// `keys` must not be empty.
Status ReplaceAtPath(YAML::Node root, const std::vector<std::string>& keys,
                     const YAML::Node& value);

// Runs `fn`, turning a yaml-cpp exception it throws (e.g. reading a node of
// the wrong kind) or std::bad_alloc into InvalidArgument "FILE: message".
Status CatchYamlErrors(const std::string& file,
                       const std::function<Status()>& fn);

}  // namespace dist_train

#endif  // DIST_TRAIN_LIB_JOBGEN_YAML_WALKER_H_
