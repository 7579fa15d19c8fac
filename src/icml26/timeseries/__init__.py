"""Shared time-series blocks (telecomts, time-peft, pro-dyn, chatsfm).

numpy only, imported by name so that a numpy paper never pulls in torch:
    generate   synthetic series: AR processes, sinusoids, trends, level shifts, on/off traffic,
               zero-inflated bursts, lagged coupling, stable VAR
    windows    chronological splits, (lookback, horizon) windows, standardisation, instance norm
    metrics    MSE / MAE overall and per channel
    features   spectral entropy, seasonal strength, lag-1 autocorrelation, lagged correlation
    linear     ridge regression and ridge AR forecasts on lag matrices
torch:
    models     RevIN, channel-independent patch transformer, MLP forecaster, a training loop with
               early stopping, and the adapter hooks: LoRA, frequency adapter, channel adapter
"""
