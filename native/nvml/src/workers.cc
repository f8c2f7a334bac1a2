#include "workers.h"

#include <algorithm>
#include <string>

#include "activity-reader.h"
#include "activity-to-js.h"
#include "snapshot-reader.h"
#include "to-js.h"

namespace topod::nvml {

namespace {

class PromiseWorker : public Napi::AsyncWorker {
 public:
  explicit PromiseWorker(Napi::Env env) : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)) {}
  // Execute() fills plain state and never throws by design; should the C++
  // runtime throw anyway (std::bad_alloc), the promise still settles.
  void OnError(const Napi::Error& error) override { deferred_.Reject(error.Value()); }

  Napi::Promise Queue() {
    Napi::Promise promise = deferred_.Promise();
    Napi::AsyncWorker::Queue();
    return promise;
  }

 protected:
  void Settle(const Outcome& outcome, Napi::Value onSuccess) {
    if (outcome.ok) {
      deferred_.Resolve(onSuccess);
    } else {
      deferred_.Reject(outcomeToError(Env(), outcome, libraryPathUsed_).Value());
    }
  }
  std::string libraryPathUsed_;

 private:
  Napi::Promise::Deferred deferred_;
};

class ReadWorker final : public PromiseWorker {
 public:
  ReadWorker(Napi::Env env, ReadOptions options) : PromiseWorker(env), options_(std::move(options)) {}
  void Execute() override {
    result_ = readSnapshot(options_);
    libraryPathUsed_ = result_.snapshot.libraryPath.empty() ? options_.libraryPath : result_.snapshot.libraryPath;
  }
  void OnOK() override {
    Napi::HandleScope scope(Env());
    Settle(result_.outcome, result_.outcome.ok ? Napi::Value(snapshotToJs(Env(), result_.snapshot)) : Env().Null());
  }

 private:
  ReadOptions options_;
  ReadResult result_;
};

class ActivityWorker final : public PromiseWorker {
 public:
  ActivityWorker(Napi::Env env, ActivityOptions options) : PromiseWorker(env), options_(std::move(options)) {}
  void Execute() override {
    result_ = readActivity(options_);
    libraryPathUsed_ = result_.activity.libraryPath.empty() ? options_.libraryPath : result_.activity.libraryPath;
  }
  void OnOK() override {
    Napi::HandleScope scope(Env());
    Settle(result_.outcome, result_.outcome.ok ? Napi::Value(activityToJs(Env(), result_.activity)) : Env().Null());
  }

 private:
  ActivityOptions options_;
  ActivityResult result_;
};

class OpenWorker final : public PromiseWorker {
 public:
  OpenWorker(Napi::Env env, std::string path) : PromiseWorker(env), path_(std::move(path)) {}
  void Execute() override {
    outcome_ = openSession(path_);
    libraryPathUsed_ = Library::instance().path();
  }
  void OnOK() override {
    Napi::HandleScope scope(Env());
    Settle(outcome_, Env().Undefined());
  }

 private:
  std::string path_;
  Outcome outcome_;
};

class CloseWorker final : public PromiseWorker {
 public:
  explicit CloseWorker(Napi::Env env) : PromiseWorker(env) {}
  void Execute() override { closeSession(); }
  void OnOK() override {
    Napi::HandleScope scope(Env());
    Settle(Outcome::success(), Env().Undefined());
  }
};

/** { libraryPath } from the first argument; "" when absent (env / soname decide). */
std::string libraryPathArgument(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsObject()) return "";
  Napi::Value path = info[0].As<Napi::Object>().Get("libraryPath");
  if (path.IsUndefined() || path.IsNull()) return "";
  if (!path.IsString()) throw Napi::TypeError::New(info.Env(), "libraryPath must be a string");
  return path.As<Napi::String>().Utf8Value();
}

ReadOptions readOptionsArgument(const Napi::CallbackInfo& info) {
  ReadOptions options;
  options.libraryPath = libraryPathArgument(info);
  if (info.Length() < 1 || !info[0].IsObject()) return options;
  Napi::Value maxAge = info[0].As<Napi::Object>().Get("staticMaxAgeMs");
  if (maxAge.IsUndefined() || maxAge.IsNull()) return options;
  const double ms = maxAge.IsNumber() ? maxAge.As<Napi::Number>().DoubleValue() : -1;
  if (!(ms >= 0)) throw Napi::TypeError::New(info.Env(), "staticMaxAgeMs must be a number >= 0");
  // Clamped so the conversion cannot overflow; a day is "cache for as long as the key holds".
  options.staticMaxAge = std::chrono::milliseconds(static_cast<long long>(std::min(ms, 86400000.0)));
  return options;
}

// { uuid } or { index }: exactly one, so a typo never silently reads GPU 0.
ActivityOptions activityOptionsArgument(const Napi::CallbackInfo& info) {
  ActivityOptions options;
  options.libraryPath = libraryPathArgument(info);
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(env, "readActivity needs { uuid } or { index }");
  Napi::Object argument = info[0].As<Napi::Object>();
  Napi::Value uuid = argument.Get("uuid");
  Napi::Value index = argument.Get("index");
  const bool hasUuid = !uuid.IsUndefined() && !uuid.IsNull();
  const bool hasIndex = !index.IsUndefined() && !index.IsNull();
  if (hasUuid == hasIndex) throw Napi::TypeError::New(env, "readActivity needs exactly one of uuid and index");
  if (hasUuid) {
    if (!uuid.IsString() || uuid.As<Napi::String>().Utf8Value().empty()) throw Napi::TypeError::New(env, "uuid must be a non-empty string");
    options.uuid = uuid.As<Napi::String>().Utf8Value();
    return options;
  }
  const double n = index.IsNumber() ? index.As<Napi::Number>().DoubleValue() : -1;
  if (!(n >= 0 && n <= 4294967295.0 && n == static_cast<double>(static_cast<long long>(n))))
    throw Napi::TypeError::New(env, "index must be an integer >= 0");
  options.index = static_cast<unsigned>(n);
  return options;
}

}  // namespace

Napi::Value ReadActivity(const Napi::CallbackInfo& info) {
  return (new ActivityWorker(info.Env(), activityOptionsArgument(info)))->Queue();
}

Napi::Value Read(const Napi::CallbackInfo& info) { return (new ReadWorker(info.Env(), readOptionsArgument(info)))->Queue(); }

Napi::Value Open(const Napi::CallbackInfo& info) { return (new OpenWorker(info.Env(), libraryPathArgument(info)))->Queue(); }

Napi::Value Close(const Napi::CallbackInfo& info) { return (new CloseWorker(info.Env()))->Queue(); }

Napi::Value Status(const Napi::CallbackInfo& info) {
  Library& library = Library::instance();
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("loaded", library.loaded());
  out.Set("references", library.references());
  out.Set("reinitCount", library.reinitCount());
  return out;
}

}  // namespace topod::nvml
