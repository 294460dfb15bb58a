"""JumpReLU's activation and its L0 step as torch.autograd.Functions with Rajamanoharan et
al.'s (2024) straight-through pseudo-derivatives through the rectangle kernel of width eps,
written from the paper alone: the oracle of every JumpReLU test. Import it after
``pytest.importorskip("torch")``."""

from __future__ import annotations

import torch


def rectangle(u):
    return (u.abs() < 0.5).to(u.dtype)


class JumpReLU(torch.autograd.Function):
    """a = h H(|h| - theta); da/dh = H(|h| - theta), da/dtheta = -sign(h) (theta/eps) K."""

    @staticmethod
    def forward(ctx, h, theta, eps):
        ctx.save_for_backward(h, theta)
        ctx.eps = eps
        return h * (h.abs() > theta).to(h.dtype)

    @staticmethod
    def backward(ctx, g):
        h, theta = ctx.saved_tensors
        eps = ctx.eps
        kernel = rectangle((h.abs() - theta) / eps)
        grad_h = g * (h.abs() > theta).to(h.dtype)
        grad_theta = (g * -torch.sign(h) * (theta / eps) * kernel).sum(0)
        return grad_h, grad_theta, None


class Step(torch.autograd.Function):
    """H(|h| - theta); no gradient to h, dH/dtheta = -(1/eps) K."""

    @staticmethod
    def forward(ctx, h, theta, eps):
        ctx.save_for_backward(h, theta)
        ctx.eps = eps
        return (h.abs() > theta).to(h.dtype)

    @staticmethod
    def backward(ctx, g):
        h, theta = ctx.saved_tensors
        kernel = rectangle((h.abs() - theta) / ctx.eps)
        return torch.zeros_like(h), (g * -kernel / ctx.eps).sum(0), None
