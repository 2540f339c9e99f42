// Field tables for the JSON objects of a case file (case_io.cpp): a table per struct names each
// member once, and drives the struct's writer, the allow-list of member names (an unknown member
// is refused: a misspelt field must not silently take its default) and its reader. The Reader
// keeps the first problem, with its JSON path; reading stops there. Private to scenarios/.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace seqby::scenarios::json_fields {

using Json = nlohmann::ordered_json;

// "path.name", or "name" at the top level.
inline std::string at(const std::string& path, std::string_view name) {
  return path.empty() ? std::string(name) : path + "." + std::string(name);
}

// Reads the members of one object, remembering the first problem with its JSON path.
class Reader {
 public:
  Reader(std::string file, std::string* error) : file_(std::move(file)), error_(error) {}

  bool failed() const { return !error_->empty(); }
  void fail(const std::string& path, const std::string& what) {
    if (error_->empty()) *error_ = file_ + ": field '" + path + "': " + what;
  }

  // The member `name` of `object` at `path`; null (and a failure) when missing.
  const Json* member(const Json& object, const std::string& path, const std::string& name,
                     const std::string& missing = "missing") {
    auto it = object.find(name);
    if (it == object.end()) {
      fail(at(path, name), missing);
      return nullptr;
    }
    return &*it;
  }
  bool object(const Json& j, const std::string& path) {
    if (!j.is_object()) fail(path, "expected an object, got " + j.dump());
    return j.is_object();
  }

  // The value `j` at `path` into *out, when it has the right type and range.
  template <typename T>
  requires std::is_unsigned_v<T> &&
      (!std::is_same_v<T, bool>)void value(const Json& j, const std::string& path, T* out,
                                           std::uint64_t max = std::numeric_limits<T>::max()) {
    if (!j.is_number_unsigned()) return fail(path, "expected an unsigned integer, got " + j.dump());
    const auto v = j.get<std::uint64_t>();
    if (v > max) return fail(path, "out of range: " + j.dump());
    *out = static_cast<T>(v);
  }
  void value(const Json& j, const std::string& path, std::int64_t* out) {
    if (!j.is_number_integer()) return fail(path, "expected an integer, got " + j.dump());
    *out = j.get<std::int64_t>();
  }
  void value(const Json& j, const std::string& path, bool* out) {
    if (!j.is_boolean()) return fail(path, "expected true or false, got " + j.dump());
    *out = j.get<bool>();
  }
  void value(const Json& j, const std::string& path, std::string* out) {
    if (!j.is_string()) return fail(path, "expected a string, got " + j.dump());
    *out = j.get<std::string>();
  }
  void value(const Json& j, const std::string& path, std::vector<std::string>* out) {
    if (!j.is_array()) return fail(path, "expected an array of strings, got " + j.dump());
    for (std::size_t i = 0; !failed() && i < j.size(); ++i) {
      std::string item;
      value(j[i], path + "[" + std::to_string(i) + "]", &item);
      if (!failed()) out->push_back(std::move(item));
    }
  }

 private:
  std::string file_;
  std::string* error_;
};

// One member of the JSON object that holds an S: how it is written and how it is read. A table
// of these per struct is the one list of its members: it drives the writer, the allow-list of
// member names (a misspelt field must not silently take its default) and the reader.
template <typename S>
struct Field {
  std::string name;
  // Adds the member to `object` (a member written only when set may leave it off).
  std::function<void(const S& s, Json& object)> write;
  // Reads the member of `object` (at `path`) into `s`; a missing member is reported unless the
  // field is optional.
  std::function<void(Reader& r, const Json& object, const std::string& path, S& s)> read;
};
template <typename S>
using Fields = std::vector<Field<S>>;

// Whether a member must be present, and when it is written.
enum class Need {
  required,            // always written; reading fails when it is missing
  optional,            // always written; older files leave it off (it keeps its default)
  omitted_when_empty,  // written only when not empty (a number: not 0); reading keeps the
                       // default when absent
};

// A check of a member just read: "" when it holds, else what is wrong (reported at its path).
template <typename S>
using Check = std::function<std::string(const S& s)>;

// The field `name` of the member `get(s)` returns (`get` takes an S& or a const S&).
template <typename S, typename Get>
Field<S> field_of(std::string name, Get get, Need need = Need::required, Check<S> check = {}) {
  Field<S> f;
  f.name = name;
  f.write = [name, get, need](const S& s, Json& object) {
    const auto& value = get(s);
    if constexpr (requires { value.empty(); }) {
      if (need == Need::omitted_when_empty && value.empty()) return;
    } else if constexpr (std::is_arithmetic_v<std::remove_cvref_t<decltype(value)>>) {
      if (need == Need::omitted_when_empty && value == 0) return;
    }
    object[name] = value;
  };
  f.read = [name, get, need, check](Reader& r, const Json& object, const std::string& path, S& s) {
    if (need != Need::required && !object.contains(name)) return;
    const Json* j = r.member(object, path, name);
    if (j == nullptr) return;
    r.value(*j, at(path, name), &get(s));
    if (check && !r.failed()) {
      if (const std::string bad = check(s); !bad.empty()) r.fail(at(path, name), bad);
    }
  };
  return f;
}

template <typename S, typename T>
Field<S> field(std::string name, T S::*member, Need need = Need::required, Check<S> check = {}) {
  return field_of<S>(
      std::move(name), [member](auto& s) -> auto& { return s.*member; }, need, std::move(check));
}

// The field `name` of a member that is itself an object, written and read by `write`/`read`.
template <typename S, typename T>
Field<S> object_field(std::string name, T S::*member, Json (*write)(const T&),
                      void (*read)(Reader&, const Json&, const std::string&, T*)) {
  Field<S> f;
  f.name = name;
  f.write = [name, member, write](const S& s, Json& object) { object[name] = write(s.*member); };
  f.read = [name, member, read](Reader& r, const Json& object, const std::string& path, S& s) {
    const Json* j = r.member(object, path, name);
    if (j != nullptr) read(r, *j, at(path, name), &(s.*member));
  };
  return f;
}

template <typename S>
Json write_fields(const Fields<S>& fields, const S& s) {
  Json j = Json::object();
  for (const Field<S>& f : fields) f.write(s, j);
  return j;
}

// Refuses members of `object` that `fields` does not name, then reads each field in order,
// stopping at the first problem.
template <typename S>
void read_fields(Reader& r, const Json& object, const std::string& path, const Fields<S>& fields,
                 S& s) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool known = false;
    for (const Field<S>& f : fields) known = known || it.key() == f.name;
    if (!known) r.fail(at(path, it.key()), "unknown field");
  }
  for (const Field<S>& f : fields) {
    if (r.failed()) return;
    f.read(r, object, path, s);
  }
}

}  // namespace seqby::scenarios::json_fields
