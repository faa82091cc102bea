"""The package itself: import is cheap and lazy, the library lookup order,
env() and version()."""
import json
import os
import re
import shutil
import tempfile
import unittest

import _ranks

import dist_train
from dist_train import _lib


def _real_library():
    """The library the tests run against, as the package finds it here."""
    _lib.lib()
    return os.path.realpath(_lib.loaded_path)


class ImportTest(unittest.TestCase):
    def test_import_loads_neither_the_library_nor_torch_nor_numpy(self):
        r = _ranks.run_python("""
            import json, sys
            import dist_train, dist_train.preemption, dist_train.checkpoint
            from dist_train import _lib
            def state():
                maps = open("/proc/self/maps").read()
                return ["torch" in sys.modules, "numpy" in sys.modules, _lib.LOAD_COUNT,
                        "libdist-train" in maps]
            print(json.dumps(state()))
            dist_train.version(); dist_train.env(); dist_train.preemption.stop_requested()
            print(json.dumps(state()))
        """)
        self.assertEqual(r.returncode, 0, r.stderr)
        before, after = [json.loads(line) for line in r.stdout.splitlines()]
        self.assertEqual(before, [False, False, 0, False])
        self.assertEqual(after, [False, False, 1, True])

    def test_version_is_the_library_s_and_configure_s(self):
        with open(os.path.join(_ranks.REPO, "configure.ac")) as f:
            configured = re.search(r"AC_INIT\(\[[^]]*\],\s*\[([^]]+)\]", f.read()).group(1)
        self.assertEqual(dist_train.__version__, configured)
        self.assertEqual(dist_train.version(), configured)

    def test_exit_code_is_ex_tempfail(self):
        self.assertEqual(dist_train.PREEMPTED_EXIT_CODE, 75)


class LookupTest(unittest.TestCase):
    """The order: DT_LIBRARY, the checkout's build/, make install's LIBDIR,
    the dynamic loader."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dt-lookup-")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.library = _real_library()

    def _copy_package(self, site):
        shutil.copytree(os.path.join(_ranks.PYTHON_DIR, "dist_train"),
                        os.path.join(self.tmp, site, "dist_train"),
                        ignore=shutil.ignore_patterns("__pycache__", "_install.py"))
        return os.path.join(self.tmp, site)

    def _link_library(self, directory):
        os.makedirs(os.path.join(self.tmp, directory), exist_ok=True)
        path = os.path.join(self.tmp, directory, _lib.SONAME)
        os.symlink(self.library, path)
        return path

    def _loaded_from(self, site, **env):
        r = _ranks.run_python("""
            import dist_train
            from dist_train import _lib
            try:
                dist_train.version()
                print(_lib.loaded_path)
            except dist_train.DistTrainError as e:
                print("error", e.code_name, e)
        """, env=_ranks.clean_env(**dict(dict(PYTHONPATH=site, DT_LIBRARY=None,
                                              LD_LIBRARY_PATH=None), **env)), cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.strip()

    def _fake_checkout(self):
        site = self._copy_package("checkout/python")
        os.makedirs(os.path.join(self.tmp, "checkout/include/dist_train"))
        open(os.path.join(self.tmp, "checkout/include/dist_train/dist_train.h"), "w").close()
        return site, self._link_library("checkout/build")

    def test_the_checkout_s_build_tree_is_found(self):
        site, built = self._fake_checkout()
        self.assertEqual(self._loaded_from(site), built)

    def test_dt_library_wins_over_the_build_tree(self):
        site, _ = self._fake_checkout()
        other = self._link_library("elsewhere")
        self.assertEqual(self._loaded_from(site, DT_LIBRARY=other), other)

    def test_a_dt_library_that_does_not_load_is_an_error_not_a_fallback(self):
        site, _ = self._fake_checkout()
        missing = os.path.join(self.tmp, "nope", _lib.SONAME)
        out = self._loaded_from(site, DT_LIBRARY=missing)
        self.assertTrue(out.startswith("error Not found DT_LIBRARY='%s' cannot be loaded: "
                                       % missing), out)

    def test_the_libdir_recorded_by_make_install_is_found(self):
        site = self._copy_package("site")
        libdir = os.path.dirname(self._link_library("prefix/lib"))
        with open(os.path.join(site, "dist_train", "_install.py"), "w") as f:
            f.write("LIBDIR = %r\n" % libdir)
        self.assertEqual(self._loaded_from(site), os.path.join(libdir, _lib.SONAME))

    def test_a_build_dir_outside_a_checkout_is_not_used(self):
        site = self._copy_package("site")  # tmp/build/ beside site/ but no checkout header
        self._link_library("build")
        out = self._loaded_from(site)
        if out == _lib.SONAME:
            self.skipTest("libdist-train.so.0 is installed for the dynamic loader here")
        self.assertTrue(out.startswith("error Not found libdist-train.so.0 not found: tried "),
                        out)
        self.assertIn("set DT_LIBRARY to its path", out)

    def test_the_dynamic_loader_is_last(self):
        site = self._copy_package("site")
        libdir = os.path.dirname(self._link_library("ld"))
        self.assertEqual(self._loaded_from(site, LD_LIBRARY_PATH=libdir), _lib.SONAME)


class EnvTest(unittest.TestCase):
    def test_every_field_from_the_contract(self):
        with _ranks.patched_environ(RANK=3, WORLD_SIZE=4, LOCAL_RANK=1, LOCAL_WORLD_SIZE=2,
                                    NODE_RANK=1, MASTER_ADDR="10.0.0.1", MASTER_PORT=29500,
                                    SLURM_JOB_ID=77, SLURM_RESTART_COUNT=2,
                                    DT_JOB_DEADLINE=1900000000):
            e = dist_train.env()
        self.assertEqual(e, dist_train.Env(rank=3, world_size=4, local_rank=1,
                                           local_world_size=2, node_rank=1,
                                           master_addr="10.0.0.1", master_port=29500,
                                           job_id=77, restart_count=2, deadline=1900000000))

    def test_unset_is_none(self):
        with _ranks.patched_environ():
            e = dist_train.env()
        self.assertEqual(e, dist_train.Env(*([None] * 10)))

    def test_a_bad_value_is_an_error_naming_it(self):
        with _ranks.patched_environ(RANK="x"):
            with self.assertRaises(dist_train.DistTrainError) as cm:
                dist_train.env()
        self.assertEqual(cm.exception.code, dist_train.INVALID_ARGUMENT)
        self.assertEqual(cm.exception.code_name, "Invalid argument")
        self.assertIn("RANK='x'", str(cm.exception))

    def test_env_is_frozen(self):
        with _ranks.patched_environ():
            e = dist_train.env()
        with self.assertRaises(AttributeError):
            e.rank = 1


if __name__ == "__main__":
    unittest.main()
