// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "jobgen/sbatch_script.h"

#include <gtest/gtest.h>

namespace dist_train {
namespace {

const char kTemplate[] = "#!/bin/bash\n{{sbatch}}\n{{run}}\n{{command}}\n";

// The case line of sweep point 0 for `yaml`'s sweep.
std::string CaseLine(const std::string& yaml) {
  JobSpec spec;
  Status st = ParseJobSpec(yaml, "t.yaml", {}, &spec);
  EXPECT_TRUE(st.ok()) << st.ToString();
  std::vector<SweepPoint> points;
  EXPECT_TRUE(ExpandSweep(spec.sweep, kMaxSweepPoints, &points).ok());
  std::string script;
  st = RenderScript(spec, points, SplitSweep(points.size(), 1001)[0], kTemplate,
                    "t.sbatch", &script);
  EXPECT_TRUE(st.ok()) << st.ToString();
  size_t at = script.find("\n  0) ");
  return at == std::string::npos
             ? ""
             : script.substr(at + 1, script.find('\n', at + 1) - at - 1);
}

// A value is inserted once, as it is: one holding a placeholder used to be
// expanded again and again, forever.
TEST(SbatchScriptTest, PlaceholdersInValuesAreNotExpandedAgain) {
  const struct {
    const char* value;
    const char* line;
  } cases[] = {
      {"'{value}'",
       "  0) dt_args=('--x={value}'); dt_params='{\"x\":\"{value}\"}' ;;"},
      {"'x{value}y'",
       "  0) dt_args=('--x=x{value}y'); dt_params='{\"x\":\"x{value}y\"}' ;;"},
      {"'{name}'",
       "  0) dt_args=('--x={name}'); dt_params='{\"x\":\"{name}\"}' ;;"},
      {"'{{command}}'",
       "  0) dt_args=('--x={{command}}'); "
       "dt_params='{\"x\":\"{{command}}\"}' ;;"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(CaseLine(std::string("launch: {command: [a]}\nsweep: {grid: "
                                   "{x: [") +
                       c.value + "]}, pass_as: args}\n"),
              c.line)
        << c.value;
  }
  EXPECT_EQ(CaseLine("launch: {command: [a]}\nsweep: {grid: {x: ['{value}']}, "
                     "pass_as: args, arg_format: '{name}={value}'}\n"),
            "  0) dt_args=('x={value}'); dt_params='{\"x\":\"{value}\"}' ;;");
}

std::string Render(const std::string& yaml) {
  JobSpec spec;
  EXPECT_TRUE(ParseJobSpec(yaml, "t.yaml", {}, &spec).ok());
  std::vector<SweepPoint> points;
  EXPECT_TRUE(ExpandSweep(spec.sweep, kMaxSweepPoints, &points).ok());
  std::string script;
  EXPECT_TRUE(RenderScript(spec, points, SplitSweep(points.size(), 1001)[0],
                           kTemplate, "t.sbatch", &script)
                  .ok());
  return script;
}

TEST(SbatchScriptTest, ARandomSweepRecordsItsSeed) {
  EXPECT_NE(Render("launch: {command: [a]}\nsweep: {random: {samples: 3, "
                   "seed: 77, params: {x: {uniform: [0, 1]}}}}\n")
                .find("\n# Sweep: 3 points (random, seed 77); array task i "
                      "runs point 0 + i.\n"),
            std::string::npos);
  EXPECT_NE(Render("launch: {command: [a]}\nsweep: {grid: {x: [1, 2]}}\n")
                .find("\n# Sweep: 2 points; array task i"),
            std::string::npos);
}

TEST(SbatchScriptTest, TheTorchrunLauncherIsConfigurableAndQuoted) {
  const char kTorchrun[] =
      "#!/bin/bash\n{{sbatch}}\n{{launcher}} {{command}}\n";
  auto render = [&](const std::string& yaml) {
    JobSpec spec;
    EXPECT_TRUE(ParseJobSpec(yaml, "t.yaml", {}, &spec).ok());
    std::string script;
    EXPECT_TRUE(
        RenderScript(spec, {}, ScriptPart{}, kTorchrun, "t.sbatch", &script)
            .ok());
    return script.substr(script.rfind('\n', script.size() - 2) + 1);
  };
  EXPECT_EQ(render("launch: {style: torchrun, command: [t.py]}\n"),
            "torchrun t.py\n");
  EXPECT_EQ(render("launch: {style: torchrun, command: [t.py], launcher: "
                   "[python3, -m, torch.distributed.run]}\n"),
            "python3 -m torch.distributed.run t.py\n");
  EXPECT_EQ(render("launch: {style: torchrun, command: [t.py], launcher: "
                   "['/opt/my venv/bin/torchrun']}\n"),
            "'/opt/my venv/bin/torchrun' t.py\n");
}

// Found by the fuzzer: a value that is not UTF-8 made the JSON library
// throw. Its bytes become U+FFFD in params.json; the value itself is kept.
TEST(SbatchScriptTest, ParamsJsonOfAValueThatIsNotUtf8) {
  std::string script =
      Render("launch: {command: [a]}\nsweep: {points: [{x: \"a\xd1l\"}]}\n");
  EXPECT_NE(script.find("dt_params='{\"x\":\"a\xef\xbf\xbdl\"}'"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("export x='a\xd1l'"), std::string::npos) << script;
}

TEST(SbatchScriptTest, ACustomCommandsFirstWordIsNeverAnAssignment) {
  JobSpec spec;
  ASSERT_TRUE(ParseJobSpec("launch: {style: custom, command: "
                           "[LD_PRELOAD=/x.so, python3, --lr=0.1]}\n",
                           "t.yaml", {}, &spec)
                  .ok());
  std::string script;
  ASSERT_TRUE(
      RenderScript(spec, {}, ScriptPart{}, kTemplate, "t.sbatch", &script)
          .ok());
  EXPECT_EQ(script.substr(script.rfind('\n', script.size() - 2) + 1),
            "'LD_PRELOAD=/x.so' python3 --lr=0.1\n");
}

// 300 copies of a 1 MiB command would be 300 MiB of script: refused before
// any copy is made.
TEST(SbatchScriptTest, ATemplateCannotMultiplyAValuePastTheCap) {
  JobSpec spec;
  spec.command = {std::string(1 << 20, 'x')};
  std::string tmpl = "#!/bin/bash\n{{sbatch}}\n";
  for (int i = 0; i < 300; ++i) tmpl += "{{command}}\n";
  std::string script;
  EXPECT_EQ(
      RenderScript(spec, {}, ScriptPart{}, tmpl, "t.sbatch", &script).message(),
      "t.sbatch: the rendered script would be larger than 268435456 bytes");
  EXPECT_EQ(script, "");
}

// wiring: wrapper needs {{wire}} in front of the command (and {{env}} for
// the job's exports), except for custom, whose command is the user's.
TEST(SbatchScriptTest, AWrapperTemplateMustPlaceWireAndEnv) {
  JobSpec spec;
  spec.command = {"python3", "train.py"};
  spec.wrapper = true;
  std::string script;
  const char* no_wire = "#!/bin/bash\n{{sbatch}}\n{{env}}srun {{command}}\n";
  EXPECT_EQ(RenderScript(spec, {}, ScriptPart{}, no_wire, "t.sbatch", &script)
                .message(),
            "t.sbatch: the template lacks {{wire}}");
  const char* ok = "#!/bin/bash\n{{sbatch}}\n{{env}}srun {{wire}}{{command}}\n";
  ASSERT_TRUE(
      RenderScript(spec, {}, ScriptPart{}, ok, "t.sbatch", &script).ok());
  EXPECT_NE(script.find("\neval \"$(dt-wire --job-env)\"\n"), std::string::npos)
      << script;
  EXPECT_NE(script.find("\nsrun dt-wire -- python3 train.py\n"),
            std::string::npos);
  EXPECT_EQ(script.find("--dist-train"), std::string::npos);
  spec.style = LaunchStyle::kCustom;
  EXPECT_TRUE(
      RenderScript(spec, {}, ScriptPart{}, no_wire, "t.sbatch", &script).ok());
  spec.wrapper = false;  // the plugin: {{wire}} is empty
  ASSERT_TRUE(
      RenderScript(spec, {}, ScriptPart{}, ok, "t.sbatch", &script).ok());
  EXPECT_NE(script.find("\nsrun python3 train.py\n"), std::string::npos);
}

TEST(SbatchScriptTest, SweepTablePadsAtMostFortyColumns) {
  std::vector<SweepPoint> points = {{{"a", std::string(100, 'x')}, {"b", "1"}},
                                    {{"a", "y"}, {"b", "2"}}};
  EXPECT_EQ(SweepTable(points), "index  a" + std::string(41, ' ') +
                                    "b\n0      " + std::string(100, 'x') +
                                    "  1\n1      y" + std::string(41, ' ') +
                                    "2\n");
}

}  // namespace
}  // namespace dist_train
