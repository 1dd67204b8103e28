#!/usr/bin/env python3
"""vit_train: a transformer training step, timm's ViT-S/16 in bf16 (SDPA attention, AdamW), the
operator-heavy workload of the overhead benchmark (about 6,800 operator calls and 750 kernels
per step).

Model: timm.create_model("vit_small_patch16_224", num_classes=1000), random weights, on the GPU;
forward and loss under torch.autocast(bfloat16) (timm's attention calls
F.scaled_dot_product_attention); AdamW (lr 1e-4, foreach); CrossEntropyLoss. Data: ONE batch of
--batch random 3x224x224 images and labels generated on the GPU once (seed 0), reused every step.

Each step (zero_grad, forward, loss, backward, optimizer step) ends with loss.item(), so its GPU
work finishes inside the timed step; each is in an NVTX range "step N". --torch-profiler runs the
steps under torch.profiler (CPU + CUDA activities); --window FIRST LAST brackets those steps with
cudaProfilerStart/Stop (validation/torch_profiler_window.py, pytorch_check.py). The step loop and
these options are resnet_train.py's (run_steps), imported from beside this file.

Prints ``RESULT steps=S ms_per_step=M final_loss=L pid=P`` where M is the median over the steps
after --warmup (default: steps 3..S-1). Exit status 1 if the loss is not finite, 2 if there is no
GPU or timm is missing.
"""
import argparse
import sys

import torch
from torch import nn

from resnet_train import add_step_args, report_steps, run_steps, step_args_error  # the benchmarks' shared step loop


def make_training(timm, batch=64):
    """(model, optimizer, loss_fn, images, labels): timm's ViT-S/16 on the GPU, AdamW, one fixed batch (seed 0)."""
    torch.manual_seed(0)
    model = timm.create_model("vit_small_patch16_224", pretrained=False, num_classes=1000).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    images = torch.randn(batch, 3, 224, 224, device="cuda", generator=gen)
    labels = torch.randint(0, 1000, (batch,), device="cuda", generator=gen)
    return model, optimizer, nn.CrossEntropyLoss(), images, labels


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_step_args(parser, steps=20, warmup=3)
    parser.add_argument("--batch", type=int, default=64, help="batch size (default 64)")
    args = parser.parse_args()
    error = step_args_error(args, "vit_train")
    if error is not None:
        return error
    try:
        import timm
    except ImportError:
        print("vit_train: timm is not installed", file=sys.stderr)
        return 2

    model, optimizer, loss_fn, images, labels = make_training(timm, args.batch)

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        return loss

    losses, seconds = run_steps(args, step)
    return report_steps(args, "vit_train", f"batch {args.batch}", losses, seconds)

if __name__ == "__main__":
    sys.exit(main())
