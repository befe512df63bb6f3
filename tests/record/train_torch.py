# A small training loop on real PyTorch, for tests/record/test_torch.sh (not in python/, whose fake
# torch it would import): 6 SGD steps of a linear
# model on CPU, each keeping one tensor of LEAK_FLOATS float32 zeros in a list that only grows (the
# planted per-step leak), optionally under a torch.profiler schedule.
# Args: MODE LEAK_FLOATS
#   optimizer: the steps are the optimizer's (memscope-record's optimizer hook)
#   profiler:  the loop runs in torch.profiler.profile(schedule=...), prof.step() each iteration
import sys

import torch

mode = sys.argv[1]
leak_floats = int(sys.argv[2])
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Linear(32, 8)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(16, 32)
y = torch.randn(16, 8)
kept = []


def iteration():
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    kept.append(torch.zeros(leak_floats))  # LEAK: one tensor per step


if mode == "profiler":
    import warnings

    from torch.profiler import ProfilerActivity, profile, schedule

    # the profiler traces the first iteration only (step 1, which memscope-leaks skips by
    # default): the trace it keeps is then no leak of a step checked; torch warns that the
    # schedule has no warmup
    warnings.simplefilter("ignore")
    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(wait=0, warmup=0, active=1, repeat=1)) as prof:
        for _ in range(6):
            iteration()
            prof.step()
else:
    for _ in range(6):
        iteration()
print("ok", len(kept))
