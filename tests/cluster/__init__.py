"""The real-cluster test tier: a real API server, scheduler, controller manager and
kubelet on loopback (``realcluster``), the Training Operator played from its facts
(``operator_player``), and the product driven against them as a user would."""
