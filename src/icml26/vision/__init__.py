"""Shared image blocks (cryoace, lamp, std-former, ia-sft, hmer-schema, codemamba).

numpy + scipy, imported by name so that a numpy paper never pulls in torch:
    images    smooth random fields, Gaussian spots, ellipses, strokes, pasting, sub-pixel shifts,
              zoom with centre crop, affine jitter, box signed distance functions
    metrics   IoU (dataset-level and per image), F1 and Cohen's kappa of binary maps, connected
              components, target-level detection Pd and pixel false-alarm rate Fa
torch:
    nets      same-size convolution stacks, MLPs, patchify, soft-IoU and focal losses
"""
