// The part of the Redis module API (Redis ≥ 7.0, API version 1) that the urlsieve module calls,
// declared here because Debian ships no redismodule.h. A module is a shared object Redis loads
// with `--loadmodule`; it finds each API function by name through the lookup function Redis
// passes in the context's first word (RedisModule_GetApi), which RedisModuleInit below resolves.
// The constants are those of the documented API (https://redis.io/docs/reference/modules/
// modules-api-ref/); a function that is missing makes RedisModuleInit fail, and the module with it.
//
// Thread-safety: the module runs on Redis's main thread only.
#ifndef URLSIEVE_DEDUP_REDIS_MODULE_REDIS_MODULE_API_H_
#define URLSIEVE_DEDUP_REDIS_MODULE_REDIS_MODULE_API_H_

#include <cstddef>
#include <cstdint>

extern "C" {

struct RedisModuleCtx;
struct RedisModuleKey;
struct RedisModuleString;
struct RedisModuleCallReply;

typedef int (*RedisModuleCmdFunc)(RedisModuleCtx* ctx, RedisModuleString** argv, int argc);

}  // extern "C"

namespace urlsieve::redis_module {

inline constexpr int kOk = 0;
inline constexpr int kErr = 1;
inline constexpr int kApiVersion1 = 1;

inline constexpr int kRead = 1 << 0;
inline constexpr int kWrite = 1 << 1;

inline constexpr int kKeyTypeEmpty = 0;
inline constexpr int kKeyTypeString = 1;

inline constexpr int kReplyString = 0;
inline constexpr int kReplyInteger = 2;

inline constexpr int kHashCFields = 1 << 2;

// The API functions, resolved by RedisModuleInit.
struct Api {
  int (*GetApi)(const char*, void*) = nullptr;
  void (*SetModuleAttribs)(RedisModuleCtx*, const char*, int, int) = nullptr;
  int (*IsModuleNameBusy)(const char*) = nullptr;
  int (*CreateCommand)(RedisModuleCtx*, const char*, RedisModuleCmdFunc, const char*, int, int,
                       int) = nullptr;
  void (*AutoMemory)(RedisModuleCtx*) = nullptr;
  int (*WrongArity)(RedisModuleCtx*) = nullptr;
  RedisModuleKey* (*OpenKey)(RedisModuleCtx*, RedisModuleString*, int) = nullptr;
  int (*KeyType)(RedisModuleKey*) = nullptr;
  size_t (*ValueLength)(RedisModuleKey*) = nullptr;
  char* (*StringDMA)(RedisModuleKey*, size_t*, int) = nullptr;
  int (*StringTruncate)(RedisModuleKey*, size_t) = nullptr;
  int (*DeleteKey)(RedisModuleKey*) = nullptr;
  int (*HashGet)(RedisModuleKey*, int, ...) = nullptr;
  const char* (*StringPtrLen)(const RedisModuleString*, size_t*) = nullptr;
  RedisModuleString* (*CreateString)(RedisModuleCtx*, const char*, size_t) = nullptr;
  RedisModuleCallReply* (*Call)(RedisModuleCtx*, const char*, const char*, ...) = nullptr;
  int (*CallReplyType)(RedisModuleCallReply*) = nullptr;
  long long (*CallReplyInteger)(RedisModuleCallReply*) = nullptr;
  const char* (*CallReplyStringPtr)(RedisModuleCallReply*, size_t*) = nullptr;
  int (*Replicate)(RedisModuleCtx*, const char*, const char*, ...) = nullptr;
  int (*ReplyWithError)(RedisModuleCtx*, const char*) = nullptr;
  int (*ReplyWithArray)(RedisModuleCtx*, long) = nullptr;
  int (*ReplyWithLongLong)(RedisModuleCtx*, long long) = nullptr;
  int (*ReplyWithStringBuffer)(RedisModuleCtx*, const char*, size_t) = nullptr;
};

inline Api api;

// Resolves every function of `api` and names the module; kErr when one is missing (an older
// Redis) or the name is taken.
inline int RedisModuleInit(RedisModuleCtx* ctx, const char* name, int version) {
  void* lookup = reinterpret_cast<void**>(ctx)[0];
  api.GetApi = reinterpret_cast<int (*)(const char*, void*)>(lookup);
  int missing = 0;
  auto get = [&](const char* function, auto** slot) {
    if (api.GetApi(function, reinterpret_cast<void*>(slot)) != kOk) ++missing;
  };
  get("RedisModule_SetModuleAttribs", &api.SetModuleAttribs);
  get("RedisModule_IsModuleNameBusy", &api.IsModuleNameBusy);
  get("RedisModule_CreateCommand", &api.CreateCommand);
  get("RedisModule_AutoMemory", &api.AutoMemory);
  get("RedisModule_WrongArity", &api.WrongArity);
  get("RedisModule_OpenKey", &api.OpenKey);
  get("RedisModule_KeyType", &api.KeyType);
  get("RedisModule_ValueLength", &api.ValueLength);
  get("RedisModule_StringDMA", &api.StringDMA);
  get("RedisModule_StringTruncate", &api.StringTruncate);
  get("RedisModule_DeleteKey", &api.DeleteKey);
  get("RedisModule_HashGet", &api.HashGet);
  get("RedisModule_StringPtrLen", &api.StringPtrLen);
  get("RedisModule_CreateString", &api.CreateString);
  get("RedisModule_Call", &api.Call);
  get("RedisModule_CallReplyType", &api.CallReplyType);
  get("RedisModule_CallReplyInteger", &api.CallReplyInteger);
  get("RedisModule_CallReplyStringPtr", &api.CallReplyStringPtr);
  get("RedisModule_Replicate", &api.Replicate);
  get("RedisModule_ReplyWithError", &api.ReplyWithError);
  get("RedisModule_ReplyWithArray", &api.ReplyWithArray);
  get("RedisModule_ReplyWithLongLong", &api.ReplyWithLongLong);
  get("RedisModule_ReplyWithStringBuffer", &api.ReplyWithStringBuffer);
  if (missing > 0) return kErr;
  if (api.IsModuleNameBusy(name)) return kErr;
  api.SetModuleAttribs(ctx, name, version, kApiVersion1);
  return kOk;
}

}  // namespace urlsieve::redis_module

#endif  // URLSIEVE_DEDUP_REDIS_MODULE_REDIS_MODULE_API_H_
