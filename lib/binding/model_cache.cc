// Copyright dist-train authors. SPDX-License-Identifier: MIT
#include "binding/model_cache.h"

#include <cerrno>
#include <string>
#include <vector>

#include "base/coding.h"
#include "binding/root_files.h"
#include "binding/topology.h"

namespace dist_train {
namespace {

// Bumped whenever NodeModel or this encoding changes: a model file of
// another version is not used (slurmd writes a new one when it starts).
const char kMagic[] = "dist-train node model 1\n";

// Bounds far above any real node, so that a damaged count cannot make a
// step allocate much.
constexpr uint32_t kMaxIndex = 1 << 20;  // a PU or NUMA node number
constexpr size_t kMaxText = 4096;        // a name, bus id or model
constexpr size_t kMinDevice = 52;        // bytes of a PciDevice, all empty

void PutU64(std::string* out, uint64_t v) {
  PutU32(out, static_cast<uint32_t>(v >> 32));
  PutU32(out, static_cast<uint32_t>(v));
}

void PutInts(std::string* out, const std::vector<int>& v) {
  PutU32(out, static_cast<uint32_t>(v.size()));
  for (int x : v) PutU32(out, static_cast<uint32_t>(x));
}

void PutStrings(std::string* out, const std::vector<std::string>& v) {
  PutU32(out, static_cast<uint32_t>(v.size()));
  for (const std::string& s : v) PutString(out, s);
}

void PutDevice(std::string* out, const PciDevice& d) {
  PutString(out, d.busid);
  PutU32(out, d.class_id);
  PutU32(out, d.vendor);
  PutU32(out, d.device);
  PutStrings(out, d.names);
  PutString(out, d.model);
  PutString(out, d.verbs);
  PutString(out, d.netdev);
  PutU32(out, static_cast<uint32_t>(d.tier));
  PutU32(out, static_cast<uint32_t>(d.path.size()));
  for (uint64_t p : d.path) PutU64(out, p);
  PutStrings(out, d.path_kinds);
  PutInts(out, d.local_pus);
  PutInts(out, d.local_numa);
}

// Reads the encoding back; the first failure is kept, with its offset.
class Reader {
 public:
  Reader(const std::string& in, const std::string& where)
      : in_(in), where_(where) {}

  bool U32(uint32_t* v, const char* what) {
    return GetU32(in_, &pos_, v) || Fail(std::string("truncated ") + what);
  }
  bool U64(uint64_t* v, const char* what) {
    uint32_t hi = 0, lo = 0;
    if (!U32(&hi, what) || !U32(&lo, what)) return false;
    *v = uint64_t{hi} << 32 | lo;
    return true;
  }
  bool I64(int64_t* v, const char* what) {
    uint64_t u = 0;
    if (!U64(&u, what)) return false;
    *v = static_cast<int64_t>(u);
    return true;
  }
  bool U16(uint16_t* v, const char* what) {
    uint32_t u = 0;
    if (!U32(&u, what)) return false;
    if (u > 0xffff) return Fail(std::string(what) + " above 0xffff");
    *v = static_cast<uint16_t>(u);
    return true;
  }
  bool Text(std::string* s, const char* what) {
    return GetString(in_, &pos_, kMaxText, s) ||
           Fail(std::string("bad or truncated ") + what);
  }
  // A count of elements of at least `min_bytes` each: never more than the
  // bytes left could hold.
  bool Count(uint32_t* n, size_t min_bytes, const char* what) {
    if (!U32(n, what)) return false;
    if (*n > (in_.size() - pos_) / min_bytes)
      return Fail(std::to_string(*n) + " " + what + " in " +
                  std::to_string(in_.size() - pos_) + " bytes");
    return true;
  }
  // A PU or NUMA node number.
  bool Index(int* v, const char* what) {
    uint32_t x = 0;
    if (!U32(&x, what)) return false;
    if (x >= kMaxIndex)
      return Fail(std::string(what) + " " + std::to_string(x) +
                  " out of range");
    *v = static_cast<int>(x);
    return true;
  }
  bool Ints(std::vector<int>* v, const char* what) {
    uint32_t n = 0;
    if (!Count(&n, 4, what)) return false;
    v->assign(n, 0);
    for (int& x : *v)
      if (!Index(&x, what)) return false;
    return true;
  }
  bool Strings(std::vector<std::string>* v, const char* what) {
    uint32_t n = 0;
    if (!Count(&n, 4, what)) return false;
    v->assign(n, "");
    for (uint32_t i = 0; i < n; ++i)
      if (!Text(&(*v)[i], what)) return false;
    return true;
  }
  bool Device(PciDevice* d) {
    uint32_t tier = 0, n = 0;
    if (!Text(&d->busid, "bus id") || !U16(&d->class_id, "class") ||
        !U16(&d->vendor, "vendor") || !U16(&d->device, "device") ||
        !Strings(&d->names, "device names") || !Text(&d->model, "model") ||
        !Text(&d->verbs, "verbs device") || !Text(&d->netdev, "netdev") ||
        !U32(&tier, "tier"))
      return false;
    if (tier > static_cast<uint32_t>(NicTier::kManagement))
      return Fail("NIC tier " + std::to_string(tier) + " does not exist");
    d->tier = static_cast<NicTier>(tier);
    if (!Count(&n, 8, "path entries")) return false;
    d->path.assign(n, 0);
    for (uint32_t i = 0; i < n; ++i)
      if (!U64(&d->path[i], "path entry")) return false;
    return Strings(&d->path_kinds, "path kinds") &&
           Ints(&d->local_pus, "local PUs") &&
           Ints(&d->local_numa, "local NUMA nodes");
  }
  bool Magic() {
    const size_t len = sizeof(kMagic) - 1;
    if (in_.compare(0, len, kMagic, len) != 0)
      return Fail("not a dist-train node model of this version");
    pos_ = len;
    return true;
  }
  bool AtEnd() {
    return pos_ == in_.size() ||
           Fail(std::to_string(in_.size() - pos_) + " bytes after the model");
  }
  Status status() const { return status_; }

 private:
  bool Fail(const std::string& what) {
    if (status_.ok())
      status_ = Status::InvalidArgument(where_ + ": offset " +
                                        std::to_string(pos_) + ": " + what);
    return false;
  }
  const std::string& in_;
  const std::string& where_;
  size_t pos_ = 0;
  Status status_;
};

bool ReadIdentity(Reader* r, FileIdentity* id) {
  return r->U64(&id->dev, "identity") && r->U64(&id->ino, "identity") &&
         r->U64(&id->size, "identity") && r->I64(&id->mtime_s, "identity") &&
         r->I64(&id->mtime_ns, "identity") &&
         r->I64(&id->ctime_s, "identity") && r->I64(&id->ctime_ns, "identity");
}

// A list of things of at least `min_bytes` each, read by `one`.
template <typename T, typename F>
bool ReadList(Reader* r, std::vector<T>* v, size_t min_bytes, const char* what,
              F one) {
  uint32_t n = 0;
  if (!r->Count(&n, min_bytes, what)) return false;
  v->assign(n, T{});
  for (T& x : *v)
    if (!one(&x)) return false;
  return true;
}

}  // namespace

FileIdentity FileIdentity::Of(const struct stat& st) {
  FileIdentity id;
  id.dev = st.st_dev;
  id.ino = st.st_ino;
  id.size = static_cast<uint64_t>(st.st_size);
  id.mtime_s = st.st_mtim.tv_sec;
  id.mtime_ns = st.st_mtim.tv_nsec;
  id.ctime_s = st.st_ctim.tv_sec;
  id.ctime_ns = st.st_ctim.tv_nsec;
  return id;
}

bool FileIdentity::operator==(const FileIdentity& o) const {
  return dev == o.dev && ino == o.ino && size == o.size &&
         mtime_s == o.mtime_s && mtime_ns == o.mtime_ns &&
         ctime_s == o.ctime_s && ctime_ns == o.ctime_ns;
}

std::string ModelCachePath(const std::string& xml_path) {
  return xml_path + ".model";
}

std::string EncodeNodeModel(const NodeModel& m, const FileIdentity& xml) {
  std::string out = kMagic;
  for (uint64_t v : {xml.dev, xml.ino, xml.size}) PutU64(&out, v);
  for (int64_t v : {xml.mtime_s, xml.mtime_ns, xml.ctime_s, xml.ctime_ns})
    PutU64(&out, static_cast<uint64_t>(v));
  PutU32(&out, static_cast<uint32_t>(m.cores.size()));
  for (const Core& c : m.cores) PutInts(&out, c.pus);
  PutU32(&out, static_cast<uint32_t>(m.numa.size()));
  for (const NumaNode& n : m.numa) {
    PutU32(&out, static_cast<uint32_t>(n.os_index));
    PutInts(&out, n.pus);
  }
  PutU32(&out, static_cast<uint32_t>(m.packages.size()));
  for (const Package& p : m.packages) {
    PutU32(&out, static_cast<uint32_t>(p.os_index));
    PutInts(&out, p.pus);
  }
  for (const auto* devices : {&m.gpus, &m.nics}) {
    PutU32(&out, static_cast<uint32_t>(devices->size()));
    for (const PciDevice& d : *devices) PutDevice(&out, d);
  }
  return out;
}

Status DecodeNodeModel(const std::string& bytes, const std::string& where,
                       NodeModel* model, FileIdentity* xml) {
  Reader r(bytes, where);
  NodeModel m;
  auto core = [&r](Core* c) { return r.Ints(&c->pus, "core PUs"); };
  auto numa = [&r](NumaNode* n) {
    return r.Index(&n->os_index, "NUMA node") && r.Ints(&n->pus, "NUMA PUs");
  };
  auto package = [&r](Package* p) {
    return r.Index(&p->os_index, "package") && r.Ints(&p->pus, "package PUs");
  };
  auto device = [&r](PciDevice* d) { return r.Device(d); };
  FileIdentity id;
  bool ok = r.Magic() && ReadIdentity(&r, &id) &&
            ReadList(&r, &m.cores, 4, "cores", core) &&
            ReadList(&r, &m.numa, 8, "NUMA nodes", numa) &&
            ReadList(&r, &m.packages, 8, "packages", package) &&
            ReadList(&r, &m.gpus, kMinDevice, "GPUs", device) &&
            ReadList(&r, &m.nics, kMinDevice, "NICs", device) && r.AtEnd();
  if (!ok) return r.status();
  *model = std::move(m);
  *xml = id;
  return Status::OK();
}

Status SaveNodeModelCache(const std::string& xml_path) {
  std::string xml;
  struct stat st;
  DT_RETURN_IF_ERROR(ReadRootOnlyFile(xml_path, &xml, &st));
  NodeModel model;
  DT_RETURN_IF_ERROR(NodeModelFromXml(xml_path, xml, &model));
  return WriteFileAtomically(ModelCachePath(xml_path),
                             EncodeNodeModel(model, FileIdentity::Of(st)));
}

Status LoadNodeModelCache(const std::string& xml_path, NodeModel* model) {
  const std::string path = ModelCachePath(xml_path);
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 && errno == ENOENT)
    return Status::NotFound(path + ": no saved node model");
  std::string bytes;
  DT_RETURN_IF_ERROR(ReadRootOnlyFile(path, &bytes));
  NodeModel m;
  FileIdentity made_from;
  DT_RETURN_IF_ERROR(DecodeNodeModel(bytes, path, &m, &made_from));
  if (stat(xml_path.c_str(), &st) != 0)
    return ErrnoError(xml_path, "cannot stat");
  if (!(FileIdentity::Of(st) == made_from)) {
    return Status::InvalidArgument(path + ": made from an earlier " + xml_path +
                                   "; not used");
  }
  *model = std::move(m);
  return Status::OK();
}

}  // namespace dist_train
