# torch is imported here, before any pytester run: pytester's in-process runs drop modules
# first imported inside them, and re-importing torch's C extension crashes the process.
import torch
import torch._inductor.config
import torch.profiler  # noqa: F401

pytest_plugins = ["pytester"]
