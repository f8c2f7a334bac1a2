{
  "targets": [
    {
      "target_name": "topod_nvml",
      "sources": [
        "src/addon.cc",
        "src/workers.cc",
        "src/to-js.cc",
        "src/activity-to-js.cc",
        "src/activity-reader.cc",
        "src/snapshot-reader.cc",
        "src/device-read.cc",
        "src/device-reader.cc",
        "src/static-cache.cc",
        "src/pair-reader.cc",
        "src/mig-reader.cc",
        "src/nvml-library.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED", "NAPI_CPP_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-fvisibility=hidden"],
      "libraries": ["-ldl"]
    }
  ]
}
