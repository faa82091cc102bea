// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "base/env.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "base/parse.h"

extern char** environ;

namespace dist_train {

EnvMap ProcessEnv() {
  EnvMap env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

const std::string* EnvFind(const EnvMap& env, std::string_view name) {
  auto it = env.find(std::string(name));
  return it == env.end() ? nullptr : &it->second;
}

const char* EnvFirstSet(const EnvMap& env,
                        std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (EnvFind(env, name) != nullptr) return name;
  }
  return nullptr;
}

Status EnvParse(const EnvMap& env, std::string_view name,
                const std::function<bool(const std::string&)>& parse,
                std::string_view is_not, std::optional<std::string>* out) {
  out->reset();
  const std::string* value = EnvFind(env, name);
  if (value == nullptr) return Status::OK();
  if (!parse(*value)) {
    return Status::InvalidArgument(std::string(name) + "='" + *value + "' " +
                                   std::string(is_not));
  }
  *out = *value;
  return Status::OK();
}

namespace {

// Reads `name` with parse(text, &value): absent -> *out empty; invalid ->
// "NAME='text' <is_not>".
template <typename T, typename Parse>
Status EnvTyped(const EnvMap& env, std::string_view name, Parse parse,
                std::string_view is_not, std::optional<T>* out) {
  T value{};
  std::optional<std::string> raw;
  DT_RETURN_IF_ERROR(EnvParse(
      env, name, [&](const std::string& v) { return parse(v, &value); }, is_not,
      &raw));
  *out = raw ? std::optional<T>(value) : std::nullopt;
  return Status::OK();
}

}  // namespace

Status EnvUint(const EnvMap& env, std::string_view name, uint64_t min,
               uint64_t max, std::optional<uint64_t>* out) {
  return EnvTyped<uint64_t>(
      env, name,
      [&](const std::string& v, uint64_t* n) {
        return ParseUint(v, min, max, n);
      },
      "is not an integer from " + std::to_string(min) + " to " +
          std::to_string(max),
      out);
}

Status EnvCount(const EnvMap& env, std::string_view name,
                std::optional<uint64_t>* out) {
  return EnvTyped<uint64_t>(
      env, name,
      [](const std::string& v, uint64_t* n) {
        return ParseUint(v, 0, UINT32_MAX, n);
      },
      "is not a count", out);
}

Status EnvBool(const EnvMap& env, std::string_view name,
               std::optional<bool>* out) {
  return EnvTyped<bool>(
      env, name, [](const std::string& v, bool* b) { return ParseBool(v, b); },
      "is not a boolean (1, true, yes, on, 0, false, no or off)", out);
}

Status EnvOneOf(const EnvMap& env, std::string_view name,
                const std::vector<std::string>& words,
                std::optional<size_t>* out) {
  size_t index = 0;
  auto parse = [&](const std::string& v) {
    for (index = 0; index < words.size(); ++index) {
      if (words[index] == v) return true;
    }
    return false;
  };
  std::optional<std::string> raw;
  DT_RETURN_IF_ERROR(EnvParse(
      env, name, parse, "is not one of " + JoinAlternatives(words), &raw));
  *out = raw ? std::optional<size_t>(index) : std::nullopt;
  return Status::OK();
}

Status EnvEpochSeconds(const EnvMap& env, std::string_view name,
                       std::optional<int64_t>* out) {
  return EnvTyped<int64_t>(
      env, name,
      [](const std::string& v, int64_t* seconds) {
        uint64_t n = 0;
        if (!ParseUint(v, 1, INT64_MAX, &n)) return false;
        *seconds = static_cast<int64_t>(n);
        return true;
      },
      "is not seconds since the epoch", out);
}

namespace {

// strtod alone would take " 5", "+5", "0x5", "inf" and "nan".
bool ParsePositiveSeconds(const std::string& text, double* out) {
  if (text.empty() || text.find_first_of("xX") != std::string::npos ||
      !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.'))
    return false;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v) || !(v > 0)) return false;
  *out = v;
  return true;
}

}  // namespace

Status EnvSeconds(const EnvMap& env, std::string_view name,
                  std::optional<double>* out) {
  double v = 0;
  std::optional<std::string> raw;
  DT_RETURN_IF_ERROR(EnvParse(
      env, name,
      [&](const std::string& s) { return ParsePositiveSeconds(s, &v); },
      "is not a positive number of seconds", &raw));
  *out = raw ? std::optional<double>(v) : std::nullopt;
  return Status::OK();
}

}  // namespace dist_train
