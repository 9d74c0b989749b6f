-- Argo CD health check for k8or's ProviderConfig (group k8or.io).
-- Paste it under resource.customizations.health.k8or.io_ProviderConfig in argocd-cm
-- (docs/install.md). Lua 5.1, as Argo CD's gopher-lua runs it.
--
-- A ProviderConfig holds settings: the webhook checks them at apply time, and the Buckets and
-- Tables that use it report, in their own health, any trouble reaching the cloud through it. It
-- is Healthy unless it is being deleted or its status carries kstatus conditions that say more.
local hs = {}
local meta = obj.metadata or {}
local status = obj.status or {}

local function condition(conditionType)
  if status.conditions == nil then
    return nil
  end
  for _, c in ipairs(status.conditions) do
    if c.type == conditionType then
      return c
    end
  end
  return nil
end

local function describe(c)
  local reason = c.reason or c.type
  if c.message ~= nil and c.message ~= "" then
    return reason .. ": " .. c.message
  end
  return reason
end

-- As Argo CD itself answers for an object being deleted, before it runs a health check.
if meta.deletionTimestamp ~= nil then
  hs.status = "Progressing"
  hs.message = "Deleting."
  return hs
end

local stalled = condition("Stalled")
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = describe(stalled)
  return hs
end

local reconciling = condition("Reconciling")
if reconciling ~= nil and reconciling.status == "True" then
  hs.status = "Progressing"
  hs.message = describe(reconciling)
  return hs
end

local ready = condition("Ready")
if ready ~= nil and ready.status == "False" then
  hs.status = "Degraded"
  hs.message = describe(ready)
  return hs
end

hs.status = "Healthy"
hs.message = "ProviderConfig for " .. tostring(obj.spec and obj.spec.provider or "a provider") .. "."
return hs
